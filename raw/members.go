package raw

import (
	"errors"
	"fmt"
)

// member is one "key": value pair of an object, as offsets into its buffer.
type member struct {
	keyStart   int // the key's opening quote
	key        []byte
	valueStart int
	valueEnd   int
}

// objectIter walks the members of the object starting at b[start] ('{').
// b must hold the whole object. It checks the grammar at this one level; the
// values are only skipped.
type objectIter struct {
	b    []byte
	i    int
	n    int // members seen
	err  error
	done bool
}

func newObjectIter(b []byte, start int) objectIter {
	it := objectIter{b: b, i: start}
	for it.i < len(b) && isSpace(b[it.i]) {
		it.i++
	}
	if it.i == len(b) || b[it.i] != '{' {
		it.err = errors.New("not a JSON object")
		return it
	}
	it.i++
	return it
}

// next returns the next member, or false at the end of the object or on an
// error (see err). end is the index just past the closing brace.
func (it *objectIter) next() (m member, ok bool) {
	if m, ok = it.nextKey(); !ok {
		return m, false
	}
	var err error
	if m.valueStart, m.valueEnd, err = skipValue(it.b, it.i); err != nil {
		it.err = fmt.Errorf("value of %q: %w", m.key, err)
		return m, false
	}
	it.i = m.valueEnd
	return m, true
}

// nextKey is next without the value: it stops where the value starts
// (it.i, after whitespace; also m.valueStart). The caller reads the value
// and sets it.i just past it.
func (it *objectIter) nextKey() (m member, ok bool) {
	if it.err != nil || it.done {
		return m, false
	}
	b := it.b
	it.skipSpace()
	if it.i == len(b) {
		it.err = errTruncated
		return m, false
	}
	if b[it.i] == '}' {
		it.i++
		it.done = true
		return m, false
	}
	if it.n > 0 {
		if b[it.i] != ',' {
			it.err = fmt.Errorf("expected ',' or '}' after object member, found %q", b[it.i])
			return m, false
		}
		it.i++
		it.skipSpace()
	}
	if it.i == len(b) || b[it.i] != '"' {
		it.err = errors.New("expected an object key")
		return m, false
	}
	m.keyStart = it.i
	end, escaped, err := skipString(b, it.i)
	if err != nil {
		it.err = err
		return m, false
	}
	m.key = b[it.i+1 : end-1]
	if escaped {
		k, err := unquote(b[it.i:end])
		if err != nil {
			it.err = err
			return m, false
		}
		m.key = []byte(k)
	}
	it.i = end
	it.skipSpace()
	if it.i == len(b) || b[it.i] != ':' {
		it.err = errors.New("expected ':' after an object key")
		return m, false
	}
	it.i++
	it.skipSpace()
	m.valueStart = it.i
	it.n++
	return m, true
}

func (it *objectIter) skipSpace() {
	for it.i < len(it.b) && isSpace(it.b[it.i]) {
		it.i++
	}
}
