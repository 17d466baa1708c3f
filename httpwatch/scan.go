package httpwatch

import (
	"bytes"
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
// once, never from its start again. It checks balance, not grammar, except
// that on the top levels (see topLevels) a bracket must close its own kind:
// "{]" is an error there, deeper it closes like "{}". Visiting every
// bracket would slow the scanner by a third, and checking the grammar
// throughout made decoding a watch event 1.6 times as costly; the readers
// of a frame check the grammar of the levels they read.
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
	// endOnly says the caller wants only the value's end, not child, so
	// that brackets need a look one by one only near depth 0, not 2. It
	// outlives reset.
	endOnly bool
	// closers[d] is the bracket that closes level d+1, a top level;
	// mismatch says another bracket closed it, which ends the scan.
	closers  [4]byte
	mismatch bool
	// spans, if not nil, notes where the containers of one of the top
	// levels are. It outlives reset.
	spans *spanNotes
}

// spanNotes are the extents (offsets in the value) of the containers on one
// top level: the members of a list item (level 2) or of a watch event's
// object (3), which buildObject then need not scan again.
type spanNotes struct {
	level int
	r     [8]valueRange // the first ones
	n     int           // how many there were
}

// note records the bracket c, at b[j], met at a depth within topLevels,
// if it opens or closes a container on spans' level.
func (s *containerScanner) note(c byte, j int) {
	sn := s.spans
	switch {
	case c&2 != 0 && s.depth == sn.level-1 && sn.n < len(sn.r):
		sn.r[sn.n].start = s.fed + j
	case c&2 == 0 && s.depth == sn.level:
		if sn.n < len(sn.r) {
			sn.r[sn.n].end = s.fed + j + 1
		}
		sn.n++
	}
}

// noted returns the spans noted in the last value scanned.
func (sn *spanNotes) noted() []valueRange {
	if sn == nil {
		return nil
	}
	return sn.r[:min(sn.n, len(sn.r))]
}

// topLevels is how many levels from the value's own are always visited
// bracket by bracket, so that their kinds are checked however the value
// was cut into pieces: the value's own with endOnly, else also its members
// and theirs (a watch event, its object and the object's members).
func (s *containerScanner) topLevels() int {
	if s.endOnly {
		return 1
	}
	return 3
}

// errMismatch is wrapped by the error for a bracket that closes a container
// of the other kind.
var errMismatch = errors.New("mismatched bracket")

// mismatchError reports the mismatch that ended the scan, the bracket being
// at position at.
func (s *containerScanner) mismatchError(at int64) error {
	return fmt.Errorf("%w at byte %d", errMismatch, at)
}

func (s *containerScanner) reset() {
	*s = containerScanner{endOnly: s.endOnly, spans: s.spans}
	if s.spans != nil {
		s.spans.n = 0
	}
}

// feed scans b, which continues the value. It returns the index just past the
// value's closing bracket and true, or len(b) and false if the value is still
// open. The first byte ever fed must be '{' or '['.
func (s *containerScanner) feed(b []byte) (int, bool) {
	n, done := s.scan(b)
	s.fed += n
	return n, done
}

// scan reads b in blocks of 64 bytes. For each block, classify gives one bit
// per byte for the quotes, backslashes and brackets in it; a prefix XOR of
// the quote bits then marks the bytes inside strings, and what is left of
// the brackets changes the depth by a population count. Near the top of the
// value, where a bracket may end the value or one of its members (with
// endOnly, only near the end), the brackets are visited one by one instead.
// The last bytes, too few for a block, go through the byte-at-a-time path.
func (s *containerScanner) scan(b []byte) (int, bool) {
	i := 0
	if s.esc {
		if len(b) == 0 {
			return 0, false
		}
		s.esc = false
		i = 1
	}
	var carry uint64 // all ones when the last block ended inside a string
	if s.inStr {
		carry = ^uint64(0)
	}
	depth := s.depth
	floor := s.topLevels() // a block that cannot take the depth below this holds no boundary
	var escIn uint64       // 1 when the last block's final backslash escapes byte 0
	for len(b)-i >= 64 {
		quote, bs, open, closed := classify((*[64]byte)(b[i:]))
		if quote|bs|escIn == 0 && carry != 0 {
			// All 64 bytes inside a string: a long one, which the
			// runtime's vectorised IndexByte crosses faster.
			i = stringRun(b, i+64)
			continue
		}
		if bs|escIn != 0 {
			var esc uint64
			esc, escIn = escapes(bs, escIn)
			quote &^= esc
			open &^= esc
			closed &^= esc
		}
		// A prefix XOR sets every bit from an opening quote up to (not
		// including) its closing quote; the top bit carries into the next
		// block.
		inside := quote ^ quote<<1
		inside ^= inside << 2
		inside ^= inside << 4
		inside ^= inside << 8
		inside ^= inside << 16
		inside ^= inside << 32
		inside ^= carry
		carry = uint64(int64(inside) >> 63)
		open &^= inside
		closed &^= inside
		if open|closed != 0 {
			if nc := bits.OnesCount64(closed); depth-nc >= floor {
				// Deep inside: neither the end nor a child boundary.
				depth += bits.OnesCount64(open) - nc
			} else {
				s.depth = depth
				for m := open | closed; m != 0; m &= m - 1 {
					j := i + bits.TrailingZeros64(m)
					if s.depth <= floor {
						if s.spans != nil {
							s.note(b[j], j)
						}
						if !s.topKind(b[j]) {
							return j + 1, true
						}
					}
					if s.bracket(b[j], j) {
						return j + 1, true
					}
				}
				depth = s.depth
			}
		}
		i += 64
	}
	s.depth = depth
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

// escapes returns the bytes of a block, other than backslashes, that a
// backslash escapes, given its backslashes bs and escIn, 1 when the last
// block's final backslash escapes byte 0; and escOut, the same for the next
// block. In a run of backslashes the first escapes the second, the third
// the fourth, and so on; the byte after the run is escaped when the run is
// odd in length. Adding a run's first bit to the run carries to the bit just
// past it; runs starting on even and on odd bits are added apart, so the
// parity of that end bit gives the run's length.
func escapes(bs, escIn uint64) (esc, escOut uint64) {
	const even = 0x5555555555555555
	bs &^= escIn // an escaped backslash starts nothing
	starts := bs &^ (bs << 1)
	evenSum := bs + starts&even
	oddSum := bs + starts&^even
	evenEnds := evenSum &^ bs // just past runs that start on even bits
	oddEnds := oddSum &^ bs
	esc = escIn | evenEnds&^even | oddEnds&even
	// A run that starts on an odd bit and reaches bit 63 is odd in length.
	oddRuns := bs &^ oddSum
	return esc, oddRuns >> 63
}

// stringRun returns where to resume scanning in a string that continues at
// b[i], b[i-1] being no backslash: at the next quote or at the end of b,
// less the backslashes just before, whose count says whether that quote is
// escaped.
func stringRun(b []byte, i int) int {
	q := bytes.IndexByte(b[i:], '"')
	if q < 0 {
		q = len(b)
	} else {
		q += i
	}
	for q > i && b[q-1] == '\\' {
		q--
	}
	return q
}

// classifyWords is classify in portable Go. Word-wide tests (SWAR) leave a
// flag in the high bit of each matching byte of a word; the flags of the
// eight words are shifted so that byte j of one value holds word k's flag
// for byte j in bit k, and a bit-matrix transpose turns that into bit 8k+j.
func classifyWords(p *[64]byte) (quote, backslash, open, close uint64) {
	const highs, fold = 0x8080808080808080, 0x2020202020202020
	for k := range 8 {
		w := binary.LittleEndian.Uint64(p[8*k:])
		lo := w &^ highs
		ascii := ^w & highs
		f := lo | fold // '[' to '{', ']' to '}'
		shift := uint(7-k) & 7
		quote |= (eqLow(lo, '"') & ascii) >> shift
		backslash |= (eqLow(lo, '\\') & ascii) >> shift
		open |= (eqLow(f, '{') & ascii) >> shift
		close |= (eqLow(f, '}') & ascii) >> shift
	}
	return transpose8(quote), transpose8(backslash), transpose8(open), transpose8(close)
}

// eqLow sets the high bit of each byte of lo that equals c, where lo has no
// high bits (a word with them masked off) and c is ASCII. Inverting lo^c
// turns a matching byte into 0xff, the only value that stays at 0x80 or
// above once 0x7f is subtracted; no byte borrows from the next, since each is
// at least 0x80 before. The low bits are left as they fall: the caller keeps
// only the high bits, and only of the bytes that were ASCII.
func eqLow(lo uint64, c byte) uint64 {
	return (lo ^ ^(0x0101010101010101 * uint64(c))) - 0x7f7f7f7f7f7f7f7f
}

// transpose8 transposes x as a matrix of 8x8 bits: bit k of byte j moves to
// bit j of byte k. Each step swaps the off-diagonal halves of blocks twice
// as big as the last.
func transpose8(x uint64) uint64 {
	t := (x ^ x>>7) & 0x00aa00aa00aa00aa
	x ^= t ^ t<<7
	t = (x ^ x>>14) & 0x0000cccc0000cccc
	x ^= t ^ t<<14
	t = (x ^ x>>28) & 0x00000000f0f0f0f0
	return x ^ t ^ t<<28
}

// bytewise scans b[i:] one byte at a time, as scan does by blocks. A
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
			if s.depth <= s.topLevels() {
				if s.spans != nil {
					s.note(c, i-1)
				}
				if !s.topKind(c) {
					return i, true
				}
			}
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

// topKind is called before bracket for a bracket c met at a depth within
// topLevels, as few brackets are. It notes which bracket closes the level c
// opens, or checks that c is the one that closes its level, and reports
// whether all is well.
func (s *containerScanner) topKind(c byte) bool {
	if c&2 != 0 {
		if s.depth < s.topLevels() {
			s.closers[s.depth&3] = c + 2 // '}' or ']'
		}
		return true
	}
	if s.depth > 0 && s.closers[(s.depth-1)&3] != c {
		s.mismatch = true
		return false
	}
	return true
}

var errTruncated = errors.New("value truncated")

// knownSpans are containers whose extents the scanner noted while framing,
// in order, as offsets from base.
type knownSpans struct {
	spans []valueRange
	base  int
}

// skip is skipValue, but jumps over a container whose extent is known.
func (k *knownSpans) skip(b []byte, i int) (start, end int, err error) {
	for len(k.spans) > 0 && k.spans[0].start-k.base < i {
		k.spans = k.spans[1:]
	}
	if len(k.spans) > 0 && k.spans[0].start-k.base == i {
		end := k.spans[0].end - k.base
		k.spans = k.spans[1:]
		return i, end, nil
	}
	return skipValue(b, i)
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
		s := containerScanner{endOnly: true}
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

// validJSON checks that b is exactly one JSON value, with optional
// whitespace around it.
func validJSON(b []byte) error {
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
