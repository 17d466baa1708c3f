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

// notedMembers appends to out the members of the object src[start:end],
// whose keys were noted at depth d (a note's offset less k.base is one in
// src). It returns false if a key is escaped: the notes leave those to
// objectIter.
func (k *knownSpans) notedMembers(src []byte, start, end, d int, out []notedMember) ([]notedMember, bool) {
	for _, n := range k.members {
		at := n.key - k.base // just past the key's closing quote
		if n.depth != d || at <= start || at >= end {
			continue
		}
		q := at - 2
		for src[q] != '"' && src[q] != '\\' {
			q--
		}
		if src[q] != '"' || src[q-1] == '\\' {
			return out, false
		}
		// No backslash between: src[q] is the opening quote.
		if len(out) > 0 {
			out[len(out)-1].valueEnd = valueEndBefore(src, q)
		}
		v := skipSpace(src, at)
		if src[v] != ':' {
			return out, false
		}
		out = append(out, notedMember{keyStart: q, keyEnd: at, valueStart: skipSpace(src, v+1)})
	}
	if len(out) > 0 {
		out[len(out)-1].valueEnd = valueEndBefore(src, end-1)
	}
	return out, true
}

// notedMember is a member found from the notes, as offsets in src: its
// key, quotes included, and its value.
type notedMember struct{ keyStart, keyEnd, valueStart, valueEnd int }

func (m *notedMember) key(src []byte) []byte { return src[m.keyStart+1 : m.keyEnd-1] }

// valueEndBefore returns where the value before src[i] ends: src[i] is the
// next key or the object's closing brace; between them are only spaces and
// a comma.
func valueEndBefore(src []byte, i int) int {
	for i--; src[i] != ',' && isSpace(src[i]); i-- {
	}
	if src[i] == ',' {
		for i--; isSpace(src[i]); i-- {
		}
	}
	return i + 1
}

// topLevel is readTop from the notes: false if there are none for src or
// they leave a key to objectIter.
func (k *knownSpans) topLevel(src []byte, dropManagedFields bool) (topLevel, bool) {
	if k.members == nil || len(src) < 2 || src[0] != '{' {
		return topLevel{}, false
	}
	var buf [len(memberNotes{}.members)]notedMember
	top, ok := k.notedMembers(src, 0, len(src), k.objDepth, buf[:0])
	if !ok {
		return topLevel{}, false
	}
	t := topLevel{insertAt: 1, members: len(top)}
	var keys keySet
	meta := -1 // the first metadata, as readTop reads only that
	for i, m := range top {
		key := m.key(src)
		keys.add(key)
		switch string(key) {
		case "metadata":
			switch c := src[m.valueStart]; {
			case meta >= 0 || c == 'n':
			case c != '{':
				return topLevel{}, false // readTop says what is wrong
			default:
				meta = i
			}
		case "kind", "apiVersion":
			t.hasType = true
		}
	}
	t.dup = keys.dup
	if meta < 0 || t.dup {
		return t, true // a repeat: withoutDuplicates reads it all again
	}
	mv := top[meta]
	fields, ok := k.notedMembers(src, mv.valueStart, mv.valueEnd, k.objDepth+1, top[len(top):])
	if !ok {
		return topLevel{}, false
	}
	var metaKeys keySet
	for i, m := range fields {
		key := m.key(src)
		metaKeys.add(key)
		switch string(key) {
		case "namespace":
			t.vals[fNamespace] = valueRange{m.valueStart, m.valueEnd}
		case "name":
			t.vals[fName] = valueRange{m.valueStart, m.valueEnd}
		case "resourceVersion":
			t.vals[fResourceVersion] = valueRange{m.valueStart, m.valueEnd}
		case "uid":
			t.vals[fUID] = valueRange{m.valueStart, m.valueEnd}
		case "managedFields":
			if dropManagedFields && t.cutEnd == 0 {
				t.cutStart, t.cutEnd = managedFieldsCut(fields, i)
			}
		}
	}
	t.dup = metaKeys.dup
	return t, true
}

// managedFieldsCut is the byte range that removes member i of fields with
// one adjacent comma: up to the next key or, for the last member, from the
// end of the one before.
func managedFieldsCut(fields []notedMember, i int) (start, end int) {
	switch {
	case i+1 < len(fields):
		return fields[i].keyStart, fields[i+1].keyStart
	case i > 0:
		return fields[i-1].valueEnd, fields[i].valueEnd
	}
	return fields[i].keyStart, fields[i].valueEnd
}
