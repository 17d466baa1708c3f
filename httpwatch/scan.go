package httpwatch

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
)

// This file holds the JSON scanning the framer, the list scanner and Object
// share. None of it builds a tree: it only finds where values start and end.

// isBracket marks the bytes that open or close a container.
var isBracket = [256]bool{'{': true, '[': true, '}': true, ']': true}

func isSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// containerScanner finds the end of one JSON object or array fed to it in
// pieces. It keeps just enough state (nesting depth, inside a string, after a
// backslash) to resume at any byte, so a value split across reads is scanned
// once, never from its start again. It checks balance, not grammar: "{]"
// closes like "{}"; the readers of a frame check the levels they read.
type containerScanner struct {
	depth int
	inStr bool
	esc   bool
	// fed counts the bytes of the value scanned before this feed call;
	// child is where the last container directly inside the value starts
	// and ends (offsets in the value), so that a caller who wants that
	// member (a watch event's "object") need not scan it again.
	fed   int
	child valueRange
}

func (s *containerScanner) reset() { *s = containerScanner{} }

// feed scans b, which continues the value. It returns the index just past the
// value's closing bracket and true, or len(b) and false if the value is still
// open. The first byte ever fed must be '{' or '['.
func (s *containerScanner) feed(b []byte) (int, bool) {
	n, done := s.scan(b)
	s.fed += n
	return n, done
}

// scan reads eight bytes at a time (SWAR): word-wide tests find the quotes
// and brackets in a word, and a prefix XOR of the quote bits tells which
// bytes are inside strings. Brackets outside strings only change the depth,
// by a population count, except near the top of the value, where they are
// visited one by one to find its end and its last child. The rare word with
// a backslash that could matter goes through the byte-at-a-time path, which
// knows what it escapes.
func (s *containerScanner) scan(b []byte) (int, bool) {
	i := 0
	if s.esc {
		if len(b) == 0 {
			return 0, false
		}
		s.esc = false
		i = 1
	}
	const highs, fold = 0x8080808080808080, 0x2020202020202020
	var carry uint64 // highs while inside a string
	if s.inStr {
		carry = highs
	}
	var escIn uint64 // the high bit of byte 0 when the last word escapes it
	for i+8 <= len(b) {
		w := binary.LittleEndian.Uint64(b[i:])
		q := eqMask(w, '"')
		if q == 0 && carry != 0 && b[i+7] != '\\' {
			escIn = 0
			i += 8 // within a string, and not escaping the next word
			continue
		}
		var esc uint64 // bytes escaped by a backslash
		if bs := eqMask(w, '\\'); bs != 0 || escIn != 0 {
			// Backslashes are rare: walk them, skipping those that are
			// themselves escaped.
			esc, escIn = escIn, 0
			for m := bs; m != 0; m &= m - 1 {
				bit := m & -m
				if bit&esc != 0 {
					continue
				}
				if bit == 1<<63 {
					escIn = 1 << 7
				} else {
					esc |= bit << 8
				}
			}
			q &^= esc
		}
		// inside has the high bit of every byte from an opening quote up to
		// (not including) its closing quote. Setting bit 0x20 folds '[' onto
		// '{' and ']' onto '}'.
		inside := q ^ q<<8
		inside ^= inside << 16
		inside ^= inside << 32
		inside ^= carry
		carry = -(inside >> 63) & highs
		f := w | fold
		open := eqMask(f, '{') &^ (inside | esc)
		closed := eqMask(f, '}') &^ (inside | esc)
		if open|closed != 0 {
			nc := bits.OnesCount64(closed)
			if s.depth-nc >= 3 {
				// Deep inside: neither the end nor a child boundary.
				s.depth += bits.OnesCount64(open) - nc
			} else {
				for m := open | closed; m != 0; m &= m - 1 {
					j := i + bits.TrailingZeros64(m)>>3
					if s.bracket(b[j], j) {
						return j + 1, true
					}
				}
			}
		}
		i += 8
	}
	s.inStr = carry != 0
	if escIn != 0 {
		if i == len(b) {
			s.esc = true
			return i, false
		}
		i++
	}
	return s.bytewise(b, i)
}

// bytewise scans b[i:] one byte at a time, as scan does word by word. A
// backslash escapes the next byte wherever it is: outside a string it is
// invalid JSON, left for the frame's reader to reject.
func (s *containerScanner) bytewise(b []byte, i int) (int, bool) {
	for i < len(b) {
		c := b[i]
		i++
		switch {
		case c == '\\':
			if i == len(b) {
				s.esc = true
				return i, false
			}
			i++
		case c == '"':
			s.inStr = !s.inStr
		case s.inStr:
		case isBracket[c]:
			if s.bracket(c, i-1) {
				return i, true
			}
		}
	}
	return i, false
}

// bracket applies the bracket c found outside a string at b[j] and reports
// whether it closed the value.
func (s *containerScanner) bracket(c byte, j int) bool {
	if c&2 != 0 { // '{' or '['
		s.depth++
		if s.depth == 2 {
			s.child.start = s.fed + j
		}
		return false
	}
	if s.depth == 2 {
		s.child.end = s.fed + j + 1
	}
	s.depth--
	return s.depth == 0
}

// eqMask sets the high bit of each byte of w that equals c, exactly.
func eqMask(w uint64, c byte) uint64 {
	const lows, highs = 0x7f7f7f7f7f7f7f7f, 0x8080808080808080
	x := w ^ (0x0101010101010101 * uint64(c))
	return ^((x&lows + lows) | x) & highs
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
		n, done := s.feed(b[i:])
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
