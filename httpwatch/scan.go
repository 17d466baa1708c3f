package httpwatch

import (
	"encoding/json"
	"errors"
	"fmt"
)

// This file holds the JSON scanning the framer, the list scanner and Object
// share. None of it builds a tree: it only finds where values start and end.

// class tells the scanner which bytes can change its state. Everything else
// is skipped in a tight loop, which is what makes framing fast.
var class = [256]uint8{
	'"': 1, '\\': 2, '{': 3, '[': 3, '}': 4, ']': 4,
}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// containerScanner finds the end of one JSON object or array fed to it in
// pieces. It keeps just enough state (open brackets, inside a string, after a
// backslash) to resume at any byte, so a value split across reads is scanned
// once, never from its start again.
type containerScanner struct {
	stack []byte // the open brackets, innermost last
	inStr bool
	esc   bool
}

func (s *containerScanner) reset() {
	s.stack = s.stack[:0]
	s.inStr, s.esc = false, false
}

// feed scans b, which continues the value. It returns the index just past the
// value's closing bracket and true, or len(b) and false if the value is still
// open. The first byte ever fed must be '{' or '['.
func (s *containerScanner) feed(b []byte) (int, bool, error) {
	i := 0
	if s.esc {
		if len(b) == 0 {
			return 0, false, nil
		}
		s.esc = false
		i = 1
	}
	for i < len(b) {
		if s.inStr {
			// Inside a string only a quote or a backslash matters.
			for i < len(b) && b[i] != '"' && b[i] != '\\' {
				i++
			}
			if i == len(b) {
				return i, false, nil
			}
			if b[i] == '\\' {
				if i+1 == len(b) {
					s.esc = true
					return len(b), false, nil
				}
				i += 2
				continue
			}
			s.inStr = false
			i++
			continue
		}
		for i < len(b) && class[b[i]] == 0 {
			i++
		}
		if i == len(b) {
			return i, false, nil
		}
		c := b[i]
		i++
		switch class[c] {
		case 1:
			s.inStr = true
		case 2:
			return i, false, fmt.Errorf("backslash outside a string")
		case 3:
			s.stack = append(s.stack, c)
		case 4:
			n := len(s.stack)
			if n == 0 {
				return i, false, fmt.Errorf("unbalanced %q", c)
			}
			if open := s.stack[n-1]; open+2 != c { // '{'+2 == '}', '['+2 == ']'
				return i, false, fmt.Errorf("%q closes %q", c, open)
			}
			s.stack = s.stack[:n-1]
			if n == 1 {
				return i, true, nil
			}
		}
	}
	return i, false, nil
}

var errTruncated = errors.New("value truncated")

// skipValue returns the index just past the JSON value that starts at b[i]
// (after optional whitespace). b must hold the whole value.
func skipValue(b []byte, i int) (start, end int, err error) {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return i, i, errTruncated
	}
	start = i
	switch c := b[i]; {
	case c == '{' || c == '[':
		var s containerScanner
		n, done, err := s.feed(b[i:])
		if err != nil {
			return start, i + n, err
		}
		if !done {
			return start, len(b), errTruncated
		}
		return start, i + n, nil
	case c == '"':
		end, _, err := skipString(b, i)
		return start, end, err
	case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
		j := i
		for j < len(b) && !endsScalar(b[j]) {
			j++
		}
		if !scalarOK(b[i:j]) {
			return start, j, fmt.Errorf("invalid literal %.32q", b[i:j])
		}
		return start, j, nil
	default:
		return start, i, fmt.Errorf("unexpected %q at the start of a value", c)
	}
}

// scalarOK checks a number or a literal; they are short, so the standard
// validator costs nothing here.
func scalarOK(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	return len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') && json.Valid(b)
}

// skipString returns the index just past the string starting at b[i] (a
// quote) and whether it holds a backslash escape.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	i++
	for i < len(b) {
		switch b[i] {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			escaped = true
			i += 2
			continue
		}
		if b[i] < 0x20 {
			return i, escaped, fmt.Errorf("control character in a string")
		}
		i++
	}
	return len(b), escaped, errTruncated
}

// unquote decodes a JSON string literal (quotes included).
func unquote(lit []byte) (string, error) {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", fmt.Errorf("decode string %.32q: %w", lit, err)
	}
	return s, nil
}

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
	m.valueStart, m.valueEnd, err = skipValue(b, it.i)
	if err != nil {
		it.err = fmt.Errorf("value of %q: %w", m.key, err)
		return m, false
	}
	it.i = m.valueEnd
	it.n++
	return m, true
}

func (it *objectIter) skipSpace() {
	for it.i < len(it.b) && isSpace(it.b[it.i]) {
		it.i++
	}
}
