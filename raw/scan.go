package raw

import (
	"bytes"
	"encoding/binary"
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
// pieces, for the readers of values the stream has already checked
// (frameScanner does that): skipValue and skipRest. It keeps just enough
// state (nesting depth, inside a string, after a backslash) to resume at any
// byte. It checks balance, not grammar, except that the value's own closing
// bracket must be of its kind.
type containerScanner struct {
	depth int
	inStr bool
	esc   bool
	// closer is the bracket that closes the value; mismatch says another
	// bracket closed it, which ends the scan.
	closer   byte
	mismatch bool
}

// errMismatch is wrapped by the error for a bracket that closes a container
// of the other kind.
var errMismatch = errors.New("mismatched bracket")

// mismatchError reports the mismatch that ended the scan, the bracket being
// at position at.
func (s *containerScanner) mismatchError(at int64) error {
	return fmt.Errorf("%w at byte %d", errMismatch, at)
}

// feed scans b, which continues the value. It returns the index just past the
// value's closing bracket and true, or len(b) and false if the value is still
// open. The first byte ever fed must be '{' or '['.
func (s *containerScanner) feed(b []byte) (int, bool) {
	return s.scan(b)
}

// scan reads b in blocks of 64 bytes. For each block, classify gives one bit
// per byte for the quotes, backslashes and brackets in it; a prefix XOR of
// the quote bits then marks the bytes inside strings, and what is left of
// the brackets changes the depth by a population count. Near the top of the
// value's end, where a bracket may end the value, the brackets are visited
// one by one instead.
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
	const floor = 1  // a block that cannot take the depth below this cannot end the value
	var escIn uint64 // 1 when the last block's final backslash escapes byte 0
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
				// Deep inside: not the end.
				depth += bits.OnesCount64(open) - nc
			} else {
				s.depth = depth
				for m := open | closed; m != 0; m &= m - 1 {
					j := i + bits.TrailingZeros64(m)
					if s.depth <= floor && !s.topKind(b[j]) {
						return j + 1, true
					}
					if s.bracket(b[j]) {
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
			if s.depth <= 1 && !s.topKind(c) {
				return i, true
			}
			if s.bracket(c) {
				return i, true
			}
		}
	}
	return i, false
}

// bracket applies the bracket c found outside a string and reports whether
// it closed the value.
func (s *containerScanner) bracket(c byte) bool {
	if c&2 != 0 { // '{' or '['
		s.depth++
		return false
	}
	s.depth--
	return s.depth == 0
}

// topKind is called before bracket for a bracket c met at depth 0 or 1. It
// notes which bracket closes the value c opens, or checks that c is the one
// that closes the value, and reports whether all is well.
func (s *containerScanner) topKind(c byte) bool {
	if c&2 != 0 {
		if s.depth == 0 {
			s.closer = c + 2 // '}' or ']'
		}
		return true
	}
	if s.depth == 1 && s.closer != c {
		s.mismatch = true
		return false
	}
	return true
}
