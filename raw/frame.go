package raw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// frameScanner is the stream's one pass over each watch event and list
// item: it finds where the value ends, checks its whole grammar as
// encoding/json.Valid does, and notes where chosen containers inside it
// are, so that the decoder reads no byte of it again to trust it or to
// find the event's object. Like containerScanner it is fed the value in
// pieces and resumes at any byte; a number or literal that a piece cuts is
// handed back (feed consumes up to its start) and scanned again, with the
// bytes already seen skipped, once more follow.
//
// It reads 64-byte blocks as bit masks: classifyJSON marks quotes,
// backslashes, structural bytes, spaces and control bytes; a prefix XOR of
// the quotes marks the strings; what is left are the tokens, one bit per
// string, bracket, colon, comma and number or literal, which a small state
// machine checks in order. The bytes inside strings are checked by masks
// too: a control byte anywhere in one, or a backslash not followed by one
// of the escapes JSON has, is an error. Like encoding/json it takes any
// bytes above 0x7f in a string, valid UTF-8 or not.
type frameScanner struct {
	fed     int // bytes of the value consumed before this feed call
	depth   int
	state   uint8  // the grammar's: stStart...
	inStr   bool   // the last feed ended inside a string
	escIn   uint64 // 1 when byte 0 of the next feed is escaped
	hexLeft int    // hex digits of a \u escape the last feed cut off
	held    int    // the number or literal starting the next feed runs at least this far
	err     error  // what was wrong, at errAt (an offset in the value)
	errAt   int
	// child is where the last container directly inside the value starts
	// and ends (offsets in the value): a watch event's "object".
	child valueRange
	// spans, if not nil, notes where the containers of one level are. It
	// outlives reset.
	spans *spanNotes
	// noteBelow is the depth below which a close is noted: the spans' level
	// or 2, for child.
	noteBelow int
	// top is the state after the innermost container closes, stack[d]
	// that for the container at depth d (stack[0]: the value's own);
	// opened[d] is where the container at depth d+1 opened (an offset in
	// the value), for the containers noted, which are not so deep.
	top    uint8
	stack  [maxDepth + 2]uint8
	opened [5]int
	pad    [65]byte // the last bytes of a piece, a block and the byte after it or fewer
}

// spanNotes are the extents (offsets in the value) of the containers on one
// level and the next: the members of a list item (level 2) or of a watch
// event's object (3), and their members, which buildObject then need not
// scan again (metadata.managedFields is the largest). With them go the
// members of the value, the object (a list item or a watch event's) and
// its metadata: see memberNotes.
type spanNotes struct {
	level int
	r     [8]valueRange // the first ones on level
	n     int           // how many there were
	deep  [8]valueRange // the first ones on level+1
	nDeep int
	memberNotes
}

// memberNotes are the keys of the objects whose tops readers walk: the
// value (a watch event or a list item), a watch event's "object" and the
// object's "metadata", each noted as it passes; the values lie between
// them. An object is noted if it opens in a noted state of the grammar,
// right after the key wanted there. If there were more keys than room, or
// a key the feed cut was maybe one wanted, incomplete is set and readers
// walk the objects themselves.
type memberNotes struct {
	members    [40]memberNote
	nMembers   int
	incomplete bool
	want       bool // the last key noted is the one whose object is noted
}

// memberNote is one member of a noted object: the depth of the object's
// members (1 for the value's own) and where its key ends (just past the
// closing quote, an offset in the value).
type memberNote struct{ depth, key int }

// noteKey notes the key whose closing quote is b[j], at depth d; at is its
// offset in the value.
func (sn *spanNotes) noteKey(b []byte, j, at, d int) {
	if sn.nMembers == len(sn.members) {
		sn.incomplete = true
		return
	}
	sn.members[sn.nMembers] = memberNote{depth: d, key: at + 1}
	sn.nMembers++
	var name string
	switch d {
	case sn.level - 2:
		name = "object"
	case sn.level - 1:
		name = "metadata"
	default:
		sn.want = false
		return
	}
	is, sure := keyIs(b, j, at, name)
	sn.want = is
	sn.incomplete = sn.incomplete || !sure
}

// keyIs reports whether the key whose closing quote is b[j], at offset at
// in the value, is name, unescaped, and whether b held enough of it to say.
func keyIs(b []byte, j, at int, name string) (is, sure bool) {
	q := at - len(name) - 1 // where its opening quote would be, in the value
	k := j - len(name)      // and where name would start in b
	switch {
	case q < 1:
		return false, true // before the value's first member
	case k < 1:
		return false, false
	case string(b[k:j]) != name || b[k-1] != '"':
		return false, true
	case k < 2:
		// The quote opens the key unless a backslash escapes it; the
		// byte before is in an earlier piece, unless it is the '{'.
		return q == 1, q == 1
	}
	return b[k-2] != '\\', b[k-2] != '\\'
}

// noted returns the spans and members noted in the last value scanned.
func (sn *spanNotes) noted() knownSpans {
	if sn == nil {
		return knownSpans{}
	}
	k := knownSpans{spans: sn.r[:min(sn.n, len(sn.r))], deep: sn.deep[:min(sn.nDeep, len(sn.deep))]}
	if !sn.incomplete {
		k.members, k.objDepth = sn.members[:sn.nMembers], sn.level-1
	}
	return k
}

// How a block's tokens ended.
const (
	tokensLeft = iota // all read, the value goes on
	tokensDone        // the value ended
	tokensHeld        // a number or literal runs to the end of the piece
	tokensFailed
)

func (s *frameScanner) reset() {
	s.fed, s.depth, s.state, s.top, s.inStr = 0, 0, stStart, stEnd, false
	s.escIn, s.hexLeft, s.held, s.err, s.errAt = 0, 0, 0, nil, 0
	s.child = valueRange{}
	s.noteBelow = 2
	if s.spans != nil {
		s.spans.n, s.spans.nDeep = 0, 0
		s.spans.nMembers, s.spans.incomplete, s.spans.want = 0, false, false
		s.noteBelow = max(2, s.spans.level+1)
	}
}

// feed scans b, which continues the value. It returns how many bytes it
// consumed and whether the value ended: just past the value's closing
// bracket and true; or, the value still open, len(b), or less when b ends
// inside a number or literal, whose bytes must be fed again. After an
// error (err set) it returns true. The first byte ever fed must be '{' or
// '['.
func (s *frameScanner) feed(b []byte) (int, bool) {
	n, done := s.scan(b)
	s.fed += n
	return n, done
}

// errInvalidJSON is wrapped by the error for a value that is not JSON.
var errInvalidJSON = errors.New("invalid JSON")

// errorAt is the error that ended the scan, the value starting at stream
// offset base.
func (s *frameScanner) errorAt(base int64) error {
	return fmt.Errorf("%w: %w at byte %d", errInvalidJSON, s.err, base+int64(s.errAt))
}

// fail records err at b[j].
func (s *frameScanner) fail(j int, err error) int {
	s.err, s.errAt = err, s.fed+j
	return tokensFailed
}

func (s *frameScanner) scan(b []byte) (int, bool) {
	if s.hexLeft > 0 {
		for j := range min(s.hexLeft, len(b)) {
			if !isHex(b[j]) {
				// At the escape's backslash, as checkStrings says it when
				// the escape comes whole: b[0] is its hex digit 4-hexLeft,
				// which is 6-hexLeft bytes past the backslash.
				s.fail(s.hexLeft-6, errors.New(`invalid \u escape in a string`))
				return j, true
			}
		}
		s.hexLeft -= min(s.hexLeft, len(b))
	}
	var carry uint64 // all ones when the last block ended inside a string
	if s.inStr {
		carry = ^uint64(0)
	}
	escIn := s.escIn
	var scalarIn uint64 // 1 when the last block ended in a number or literal
	var takerIn uint64  // 1 when it ended in a token that takes in a separator
	var openIn uint64   // 1 when it ended in an opening bracket
	for i := 0; i < len(b); i += 64 {
		p, valid := s.block(b, i)
		quote, bs, open, close, sep, space, ctrl, inside := classifyJSON((*[64]byte)(p[:64]))
		if quote|bs|ctrl|escIn == 0 && carry != 0 && valid == 64 {
			// Inside one string throughout: a long one, whose plain bytes
			// the next blocks need not classify.
			i += plainRun(b[i+64:])
			continue
		}
		var esc uint64
		if bs|escIn != 0 {
			esc, escIn = escapes(bs, escIn)
			quote &^= esc
			inside = prefixXOR(quote)
		}
		inside ^= carry
		carry = uint64(int64(inside) >> 63)
		ws := space | ctrl
		open &^= inside
		close &^= inside
		sep &^= inside
		scalar := ^(inside | ws | quote | open | close | sep)
		// A string is one token, at its closing quote. Tokens take in the
		// byte right after them as tokenClass says; those bytes are no
		// tokens of their own.
		closing := quote &^ inside
		close &^= open<<1 | openIn
		taker := closing | close
		tokens := taker | open | sep&^(taker<<1|takerIn) | scalar&^(scalar<<1|scalarIn)
		scalarIn, takerIn, openIn = scalar>>63, taker>>63, open>>63
		lim := ^uint64(0)
		if valid < 64 {
			lim = 1<<valid - 1
			escIn = esc >> valid & 1
		}
		stop, how := s.tokens(b, p, i, tokens&lim)
		if how != tokensLeft {
			lim &= 1<<stop - 1 // the bytes before the stop: held, past the end or after an error
		}
		if (ctrl|esc)&lim != 0 && !s.checkStrings(b, i, inside, ctrl, esc, lim) {
			return i + stop, true // an error before the stop, if any, wins
		}
		switch how {
		case tokensDone, tokensFailed:
			return i + stop, true
		case tokensHeld:
			s.inStr, s.escIn = false, 0
			return i + stop, false
		}
	}
	s.inStr, s.escIn = carry != 0, escIn
	return len(b), false
}

// block returns the 64 bytes at b[i] and the byte after them, and how many
// of the 64 are b's: the last bytes of b, 64 or fewer, are copied into pad
// behind spaces.
func (s *frameScanner) block(b []byte, i int) (*[65]byte, int) {
	if len(b)-i > 64 {
		return (*[65]byte)(b[i:]), 64
	}
	n := copy(s.pad[:], b[i:])
	for k := n; k < len(s.pad); k++ {
		s.pad[k] = ' '
	}
	return &s.pad, n
}

// prefixXOR sets every bit from an opening quote up to (not including) its
// closing quote.
func prefixXOR(q uint64) uint64 {
	q ^= q << 1
	q ^= q << 2
	q ^= q << 4
	q ^= q << 8
	q ^= q << 16
	return q ^ q<<32
}

// tokens checks the tokens m of the block at b[i], w (with the byte after
// it, or a space past the end of b), in order. It returns
// how they ended and where (bits of the block before stop were read).
// Most tokens only move the state, by table; a container saves the state
// after it on stack as it opens.
func (s *frameScanner) tokens(b []byte, w *[65]byte, i int, m uint64) (stop, how int) {
	row, d, top := uint(s.state)<<6, s.depth, s.top
	for ; m != 0; m &= m - 1 {
		p := bits.TrailingZeros64(m) & 63
		cls := pairClasses[binary.LittleEndian.Uint16(w[p:])]
		e := steps[(row|uint(cls))&(32<<6-1)]
		if e < notPlain {
			row = uint(e)
			continue
		}
		j := i + p
		st := uint8(row >> 6)
		if e&noteStep != 0 {
			s.spans.noteKey(b, j, s.fed+j, d)
			row = uint(e&0xff) << 6
			continue
		}
		switch e := uint8(e); {
		case e&opens != 0:
			s.stack[d], top = top, afterValue[st]
			s.opened[min(d, len(s.opened)-1)] = s.fed + j // deeper ones share the last
			d++
			next := e & stateBits
			if next == stObjKeyOrEnd && s.spans != nil && (d == 1 || st == notedOff+stObjValue && s.spans.want) {
				next += notedOff
			}
			st = next
			if d == maxDepth {
				st += deep
			}
		case e&closes != 0:
			d--
			st, top = top, s.stack[d]
			if d < s.noteBelow && s.closed(d, j) {
				s.state, s.depth, s.top = st, d, top
				return p + 1, tokensDone
			}
			if with := e &^ closes; with != 0 {
				sepClass := (kColon + with - withColon) * nWith
				next := grammar[st][sepClass]
				if next >= opens {
					return p, s.fail(j+1, wrongToken(st, sepClass, b[j+1]))
				}
				st = next
			}
		case e == actScalar:
			held, err := s.scalar(b, j)
			if err != nil {
				return p, s.fail(j, err)
			}
			if held {
				s.state, s.depth, s.top = st, d, top
				return p, tokensHeld
			}
			st = afterValue[st]
		case e == actEmptyTop:
			return p + 2, tokensDone
		default:
			if cls%nWith >= withCloseObj {
				return p, s.fail(j+1, wrongToken(st, cls, b[j])) // at the closing bracket
			}
			return p, s.fail(j, wrongToken(st, cls, b[j]))
		}
		row = uint(st) << 6
	}
	s.state, s.depth, s.top = uint8(row>>6), d, top
	return 64, tokensLeft
}

// scalar checks the number or literal at b[j] and reports whether it runs
// to the end of b, to be fed again.
func (s *frameScanner) scalar(b []byte, j int) (held bool, err error) {
	end := j
	if j == 0 {
		end = s.held
	}
	for end < len(b) && !endsScalar(b[end]) {
		end++
	}
	if s.held = 0; end == len(b) {
		s.held = end - j
		return true, nil
	}
	if !scalarOK(b[j:end]) {
		return false, fmt.Errorf("invalid literal %.32q", b[j:end])
	}
	return false, nil
}

// closed notes the container closed at b[j], leaving depth d, which is
// below noteBelow, and reports whether it was the value itself.
func (s *frameScanner) closed(d, j int) bool {
	r := valueRange{s.opened[d], s.fed + j + 1}
	if d == 1 {
		s.child = r
	}
	if sn := s.spans; sn != nil {
		switch {
		case d == sn.level-1 && sn.n < len(sn.r):
			sn.r[sn.n] = r
			sn.n++
		case d == sn.level && sn.nDeep < len(sn.deep):
			sn.deep[sn.nDeep] = r
			sn.nDeep++
		}
	}
	return d == 0
}

// checkStrings checks the bytes lim of the block at b[i] that the tokens
// do not: no control byte inside a string or, but for whitespace, outside
// one, and only JSON's escapes (esc are the escaped bytes).
func (s *frameScanner) checkStrings(b []byte, i int, inside, ctrl, esc, lim uint64) bool {
	if bad := ctrl & inside & lim; bad != 0 {
		s.fail(i+bits.TrailingZeros64(bad), errors.New("control character in a string"))
		return false
	}
	for m := ctrl &^ inside & lim; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros64(m)
		if c := b[j]; c != '\t' && c != '\n' && c != '\r' {
			s.fail(j, fmt.Errorf("unexpected %q", c))
			return false
		}
	}
	for m := esc & lim; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros64(m)
		if c := b[j]; c != 'u' {
			if !shortEscape[c] {
				s.fail(j-1, fmt.Errorf(`invalid escape "\\%c" in a string`, c))
				return false
			}
			continue
		}
		end := min(j+5, len(b))
		for k := j + 1; k < end; k++ {
			if !isHex(b[k]) {
				s.fail(j-1, errors.New(`invalid \u escape in a string`))
				return false
			}
		}
		s.hexLeft = j + 5 - end
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f'
}

// plainRunWords is plainRun in portable Go, eight bytes at a time: it
// counts the bytes before the first quote, backslash or control byte, or,
// with none, those of p's whole 8-byte words.
func plainRunWords(p []byte) int {
	const highs, below20 = 0x8080808080808080, 0x6060606060606060
	i := 0
	for ; len(p)-i >= 8; i += 8 {
		w := binary.LittleEndian.Uint64(p[i:])
		lo := w &^ highs
		if stop := (eqLow(lo, '"') | eqLow(lo, '\\') | ^(lo + below20)) & ^w & highs; stop != 0 {
			return i + bits.TrailingZeros64(stop)>>3
		}
	}
	return i
}
