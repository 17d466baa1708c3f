package raw

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
)

var errTruncated = errors.New("value truncated")

// knownSpans are containers whose extents the scanner noted while framing,
// each list in order, as offsets from base: those on one level (spans) and
// on the next (deep). members, if not nil, are the members of the noted
// objects (see memberNotes), those of the object itself at objDepth.
type knownSpans struct {
	spans, deep []valueRange
	base        int
	members     []memberNote
	objDepth    int
}

// skip is skipValue, but jumps over a container whose extent is known.
func (k *knownSpans) skip(b []byte, i int) (start, end int, err error) {
	if end := k.end(i); end != 0 {
		return i, end, nil
	}
	return skipValue(b, i)
}

// end returns where the container at b[i] ends if its extent is known, else
// 0.
func (k *knownSpans) end(i int) int {
	if end := knownEnd(&k.spans, i+k.base); end != 0 {
		return end - k.base
	}
	if end := knownEnd(&k.deep, i+k.base); end != 0 {
		return end - k.base
	}
	return 0
}

// knownEnd drops the spans before at and returns the end of the one
// starting there, or 0.
func knownEnd(spans *[]valueRange, at int) int {
	for len(*spans) > 0 && (*spans)[0].start < at {
		*spans = (*spans)[1:]
	}
	if len(*spans) > 0 && (*spans)[0].start == at {
		end := (*spans)[0].end
		*spans = (*spans)[1:]
		return end
	}
	return 0
}

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
		if s.mismatch {
			return start, i + n, s.mismatchError(int64(i + n - 1))
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

// maxDepth bounds how deeply values may nest: encoding/json's own limit, so
// that whatever is accepted here also decodes with Object.Decode.
const maxDepth = 10000

// validValue checks the JSON value that starts at b[i], after optional
// whitespace, and returns where it starts and the index just past it. b
// must hold the whole value. It does not recurse: an open container costs a
// bit, so a hostile depth costs no stack.
func validValue(b []byte, i int) (start, end int, err error) {
	var small [4]uint64
	objects := small[:0] // bit d is set when level d is an object
	depth := 0
	i = skipSpace(b, i)
	start = i
values:
	for {
		if i == len(b) {
			return start, i, errTruncated
		}
		switch c := b[i]; {
		case c == '"':
			if i, _, err = skipString(b, i); err != nil {
				return start, i, err
			}
		case c == '{' || c == '[':
			if depth == maxDepth {
				return start, i, fmt.Errorf("values nested deeper than %d at byte %d", maxDepth, i)
			}
			if depth>>6 == len(objects) {
				objects = append(objects, 0)
			}
			if bit := uint64(1) << (depth & 63); c == '{' {
				objects[depth>>6] |= bit
			} else {
				objects[depth>>6] &^= bit
			}
			if i = skipSpace(b, i+1); i < len(b) && b[i] == c+2 { // '}' or ']'
				i++
				break
			}
			depth++
			if c == '{' {
				if i, err = memberKey(b, i); err != nil {
					return start, i, err
				}
			}
			continue
		case c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n':
			j := i
			for j < len(b) && !endsScalar(b[j]) {
				j++
			}
			if !scalarOK(b[i:j]) {
				return start, j, fmt.Errorf("invalid literal %.32q at byte %d", b[i:j], i)
			}
			i = j
		default:
			return start, i, fmt.Errorf("unexpected %q at the start of a value at byte %d", c, i)
		}
		// A value ended: close the containers it ends, up to a comma.
		for depth > 0 {
			if i = skipSpace(b, i); i == len(b) {
				return start, i, errTruncated
			}
			d := depth - 1
			object := objects[d>>6]>>(d&63)&1 != 0
			switch c := b[i]; {
			case c == ',':
				i = skipSpace(b, i+1)
				if object {
					if i, err = memberKey(b, i); err != nil {
						return start, i, err
					}
				}
				continue values
			case object && c == '}', !object && c == ']':
				i++
				depth--
			case object:
				return start, i, fmt.Errorf("expected ',' or '}' at byte %d, found %q", i, c)
			default:
				return start, i, fmt.Errorf("expected ',' or ']' at byte %d, found %q", i, c)
			}
		}
		return start, i, nil
	}
}

// memberKey checks the key at b[i] and the colon after it, and returns
// where the member's value starts.
func memberKey(b []byte, i int) (int, error) {
	if i == len(b) {
		return i, errTruncated
	}
	if b[i] != '"' {
		return i, fmt.Errorf("expected an object key at byte %d, found %q", i, b[i])
	}
	i, _, err := skipString(b, i)
	if err != nil {
		return i, err
	}
	if i = skipSpace(b, i); i == len(b) {
		return i, errTruncated
	}
	if b[i] != ':' {
		return i, fmt.Errorf("expected ':' after an object key at byte %d, found %q", i, b[i])
	}
	return skipSpace(b, i+1), nil
}

// Validate checks that b is exactly one JSON value, with optional
// whitespace around it, as encoding/json.Valid does but without recursion,
// so that no nesting grows the stack; the error says what is wrong where.
func Validate(b []byte) error {
	_, end, err := validValue(b, 0)
	if err != nil {
		return err
	}
	if end = skipSpace(b, end); end < len(b) {
		return fmt.Errorf("unexpected %q after the value at byte %d", b[end], end)
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scalarOK checks a number or a literal.
func scalarOK(b []byte) bool {
	switch string(b) {
	case "true", "false", "null":
		return true
	}
	return validNumber(b)
}

// validNumber reports whether b is exactly one JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func validNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(b)
}

// digits returns the index of the first byte at or after i that is not a
// decimal digit.
func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at b[i] (a
// quote) and whether it holds a backslash escape.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	return stringTail(b, i+1)
}

// stringTail is skipString resumed at b[i], inside a string but not inside
// an escape. It passes over eight plain bytes at a time: no quote, backslash
// or control character. When b ends first, end is where to resume once more
// bytes follow: len(b), or the backslash of an escape that b cuts.
func stringTail(b []byte, i int) (end int, escaped bool, err error) {
	const highs, below20 = 0x8080808080808080, 0x6060606060606060
	for i < len(b) {
		if len(b)-i >= 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			lo := w &^ highs
			// lo+0x60 stays under 0x80 exactly for the bytes below 0x20.
			stop := (eqLow(lo, '"') | eqLow(lo, '\\') | ^(lo + below20)) & ^w & highs
			if stop == 0 {
				i += 8
				continue
			}
			i += bits.TrailingZeros64(stop) >> 3
		}
		switch b[i] {
		case '"':
			return i + 1, escaped, nil
		case '\\':
			escaped = true
			if i+2 <= len(b) && shortEscape[b[i+1]] {
				i += 2
				continue
			}
			n, err := escapeLen(b[i:])
			if err != nil {
				return i, escaped, err
			}
			i += n
			continue
		}
		if b[i] < 0x20 {
			return i, escaped, fmt.Errorf("control character in a string")
		}
		i++
	}
	return len(b), escaped, errTruncated
}

// shortEscape marks the bytes that make a two-byte escape after a backslash.
var shortEscape = [256]bool{'"': true, '\\': true, '/': true, 'b': true, 'f': true, 'n': true, 'r': true, 't': true}

// escapeLen checks the escape sequence that starts b (a backslash) and
// returns its length. It returns errTruncated if b ends inside it.
func escapeLen(b []byte) (int, error) {
	if len(b) < 2 {
		return 0, errTruncated
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if len(b) < 6 {
			return 0, errTruncated
		}
		for _, c := range b[2:6] {
			if !('0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f') {
				return 0, fmt.Errorf("invalid escape %q in a string", b[:6])
			}
		}
		return 6, nil
	}
	return 0, fmt.Errorf("invalid escape %q in a string", b[:2])
}

// unquote decodes a JSON string literal (quotes included).
func unquote(lit []byte) (string, error) {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", fmt.Errorf("decode string %.32q: %w", lit, err)
	}
	return s, nil
}
