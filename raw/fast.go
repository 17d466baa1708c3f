package raw

import "math/bits"

// This file holds frameScanner's fast path: a block of compact JSON (no
// whitespace between tokens, as API servers write it) checked by masks,
// with a step per bracket instead of one per token.
//
// Without whitespace each token starts at the byte after the last one
// ends, so the grammar is a rule on each pair of adjacent bytes: what may
// follow '{', '[', ':', a comma, a key and a value. Only two rules need
// more than the byte before: a comma is followed by a key in an object
// and by a value in an array, and a key is a string that follows '{' or
// such a comma. The brackets, walked one by one, say which container
// each byte is in; an addition carries each key's opening quote to its
// closing one. Numbers and literals are checked one by one, as before.
// Anything the masks do not take (whitespace, an error, the value's end,
// a block cut by the end of the input) is left to tokens, which reads
// the block again from the same state and says what is wrong where.

// fastBlocks turns the fast path on; tests turn it off to compare.
var fastBlocks = true

// What the byte before a block was, by the state tokens left: the mask
// bit each state carries in. Only states inside a container are here.
const (
	prevObjOpen   = 1 << iota // '{': a key or '}' follows
	prevNeedKey               // '{' or a comma in an object
	prevArrOpen               // '[': a value or ']'
	prevNeedValue             // '[', ':' or a comma in an array
	prevKey                   // a key: ':'
	prevValue                 // a value: ',' or a closing bracket
)

var carried = [stEnd]uint8{
	stObjKeyOrEnd: prevObjOpen | prevNeedKey, stObjKey: prevNeedKey, stObjColon: prevKey,
	stObjValue: prevNeedValue, stObjComma: prevValue, stArrValueOrEnd: prevArrOpen | prevNeedValue,
	stArrValue: prevNeedValue, stArrComma: prevValue,
}

// fastRun takes the blocks from b[i] on the fast path while it can: each
// whole (with a byte after it) and compact. It returns where it stopped,
// its state then as tokens would have left it, and the carries into that
// block: carry (all ones inside a string), escIn, scalarIn (1 inside a
// number or literal).
func (s *frameScanner) fastRun(b []byte, i int, carry, escIn, scalarIn uint64) (int, uint64, uint64, uint64) {
	var m jsonMasks
	st, d, top := s.state, s.depth, s.top
	for ; len(b)-i > 64 && st != stStart && st < stEnd; i += 64 {
		w := (*[65]byte)(b[i:])
		classifyJSON((*[64]byte)(w[:64]), &m)
		quote, inside := m.quote, m.quoted
		if quote|m.backslash|m.control|escIn == 0 && carry != 0 {
			i += plainRun(b[i+64:]) // a long string
			continue
		}
		esc, escOut := uint64(0), uint64(0)
		if m.backslash|escIn != 0 {
			esc, escOut = escapes(m.backslash, escIn)
			quote &^= esc
			inside = prefixXOR(quote)
		}
		inside ^= carry
		if m.control|m.space&^inside != 0 {
			break // whitespace or control bytes: tokens'
		}
		open, close := m.open&^inside, m.close&^inside
		colon, comma := m.colon&^inside, m.comma&^inside
		scalar := ^(inside | quote | open | close | colon | comma)
		var keyIn, prev uint64 // keyIn: byte 0 continues a key
		if carry != 0 {
			// The string began in the last block, where tokens said
			// nothing yet of it (a string is its token at its end).
			if carried[st]&(prevNeedKey|prevNeedValue) == 0 {
				break
			}
			keyIn = uint64(carried[st]) / prevNeedKey & 1
		} else if scalarIn == 0 {
			prev = uint64(carried[st])
		}
		objOpen, objClose := open&m.object, close&m.object
		arrOpen := open &^ m.object
		empty := objOpen&(objClose>>1) | arrOpen&(close&^m.object>>1)
		s.keep()
		inObject, at, ok := s.walk(i, w, (open|close)&^(empty|empty<<1), st < stArrValueOrEnd, walked{depth: d, top: top})
		objComma := comma & inObject
		strOpen := quote & inside
		needKey := (objOpen|objComma)<<1 | prev/prevNeedKey&1
		sum, _ := bits.Add64(inside, strOpen&needKey|keyIn, 0)
		keyClose := sum &^ inside
		scalarStart := scalar &^ (scalar<<1 | scalarIn)
		value := strOpen | open | scalarStart
		ends := (quote&^inside&^keyClose|close)<<1 | prev/prevValue&1 | (scalar<<1|scalarIn)&^scalar
		needValue := (colon|comma&^inObject|arrOpen)<<1 | prev/prevNeedValue&1
		bad := colon ^ (keyClose<<1 | prev/prevKey&1)
		bad |= ends &^ (comma | close)
		bad |= needKey &^ (strOpen | objClose&(objOpen<<1|prev/prevObjOpen&1))
		bad |= needValue &^ (value | close&(arrOpen<<1|prev/prevArrOpen&1))
		if !ok || bad != 0 || esc != 0 && !escapesOK(b, i, esc) || scalarStart != 0 && !s.scalarsOK(b, i, scalar, scalarStart) {
			s.rollback()
			break
		}
		st, d, top = endState(w, st, inside, strOpen, keyClose, colon, comma, inObject), at.depth, s.commit(at)
		if i == 0 {
			s.held = 0 // any number at byte 0 was checked whole
		}
		carry, escIn, scalarIn = uint64(int64(inside)>>63), escOut, scalar>>63
	}
	s.state, s.depth, s.top = st, d, top
	return i, carry, escIn, scalarIn
}

// fastUndo is what fastRun restores when it leaves a block to tokens:
// the spans walk noted near the top and where it saw containers open
// there. (It writes no container's state but at the end of a block
// taken.)
type fastUndo struct {
	opened   [nOpened]int
	child    valueRange
	n, nDeep int
	// openedSet says opened is saved.
	openedSet bool
}

// keep starts keeping what rollback restores.
func (s *frameScanner) keep() {
	u := &s.undo
	u.child, u.openedSet = s.child, false
	if sn := s.spans; sn != nil {
		u.n, u.nDeep = sn.n, sn.nDeep
	}
}

// rollback restores what keep saw.
func (s *frameScanner) rollback() {
	u := &s.undo
	if u.openedSet {
		s.opened = u.opened
	}
	s.child = u.child
	if sn := s.spans; sn != nil {
		sn.n, sn.nDeep = u.n, u.nDeep
	}
}

// walked is where walk left the containers: depth, the kind of the
// innermost (1: an object), the states after those containers open when
// the block began (top: the innermost's, the rest on the stack) and the
// kinds of the parents of the n containers it opened that are still open
// (bits, the innermost's parent at bit 0).
type walked struct {
	depth   int
	top     uint8
	parents uint64
	n       int
}

// walk steps through the brackets m of the block at b[i] (w), as tokens
// would, but keeping the containers it opens as bits, which commit writes
// as states once the block is taken. inObject marks the bytes where the
// innermost container is an object, obj saying whether it is at the
// block's start. Far from the top, where spans are noted, a bracket is a
// few instructions without a branch. ok is false at a bracket that does
// not match, one that nests too deep, or where the value ends.
func (s *frameScanner) walk(i int, w *[65]byte, m uint64, obj bool, at walked) (inObject uint64, _ walked, ok bool) {
	var toggles, bad, kind, parents uint64
	if obj {
		kind, inObject = 1, ^uint64(0)
	}
	d, n := at.depth, 0
	for ; m != 0; m &= m - 1 {
		p := bits.TrailingZeros64(m) & 63
		c := w[p]
		isObj, open := uint64(c>>5)&1, uint64(c>>1)&1
		next := parents & 1
		if d > s.noteBelow && d < maxDepth-2 && (n > 0 || open == 1) {
			// Opening: push the kind. Closing: check it and pop.
			sel := -open
			bad |= (kind ^ isObj) &^ sel
			next ^= (next ^ isObj) & sel
			parents = parents>>1 ^ (parents>>1^(parents<<1|kind))&sel
			step := int(open)*2 - 1
			n += step
			d += step
		} else {
			closedIn, fine := uint64(0), false
			if closedIn, d, at.top, fine = s.walkBracket(i, p, c, kind, d, at.top, n); !fine {
				return 0, walked{}, false
			}
			switch {
			case open == 1:
				parents, n, next = parents<<1|kind, n+1, isObj
			case n > 0:
				parents, n = parents>>1, n-1
			default:
				next = closedIn
			}
		}
		toggles |= (kind ^ next) << p
		kind = next
	}
	return inObject ^ prefixXOR(toggles), walked{depth: d, top: at.top, parents: parents, n: n}, bad == 0
}

// commit writes the states of the containers walk opened that are still
// open, as tokens keeps them, and returns the innermost's.
func (s *frameScanner) commit(at walked) uint8 {
	for j := 1; j < at.n; j++ {
		s.stack[at.depth-j] = afterIn(at.parents >> j & 1)
	}
	if at.n == 0 {
		return at.top
	}
	s.stack[at.depth-at.n] = at.top // the state after the container they are in
	return afterIn(at.parents & 1)
}

// afterIn is the state after a container whose parent is of the kind.
func afterIn(kind uint64) uint8 {
	return stArrComma - (stArrComma-stObjComma)*uint8(kind)
}

// walkBracket is walk's step for the bracket c at b[i+p], the innermost
// container's kind being kind, with branches: near the top, where spans
// are noted and the value ends, and near the depth limit. n containers
// are open that the block opened; top is the state after the innermost
// of the others. Closing one of those n, it leaves the kinds to walk;
// else it returns the kind of the innermost container after it.
func (s *frameScanner) walkBracket(i, p int, c byte, kind uint64, d int, top uint8, n int) (uint64, int, uint8, bool) {
	isObj := uint64(c>>5) & 1
	if c&2 != 0 {
		if d >= maxDepth-2 {
			return 0, 0, 0, false
		}
		if !s.undo.openedSet {
			s.undo.opened, s.undo.openedSet = s.opened, true
		}
		s.opened[min(d, len(s.opened)-1)] = s.fed + i + p
		return isObj, d + 1, top, true
	}
	if isObj != kind {
		return 0, 0, 0, false
	}
	d--
	if d < s.noteBelow && s.closed(d, i+p) {
		return 0, 0, 0, false
	}
	if n > 0 {
		return 0, d, top, true
	}
	closedObj := uint64(0)
	if top == stObjComma {
		closedObj = 1
	}
	return closedObj, d, s.stack[d], true
}

// endState is the state tokens would leave after a block that fast took,
// by what its last byte is; in a string, the state before the string,
// by the byte before its opening quote, or st, the state the block
// started in, if the string did.
func endState(w *[65]byte, st uint8, inside, strOpen, keyClose, colon, comma, inObject uint64) uint8 {
	obj := inObject>>63 != 0
	last := w[63]
	if inside>>63 != 0 {
		p := 63 - bits.LeadingZeros64(strOpen) // -1: none
		if p <= 0 {
			return st
		}
		last, obj = w[p-1], inObject>>(p-1)&1 != 0
	} else if (keyClose|colon|comma)>>63 == 0 && last != '{' && last != '[' {
		last = '"' // a value's last byte
	}
	switch {
	case keyClose>>63 != 0 && inside>>63 == 0:
		return stObjColon
	case last == '{':
		return stObjKeyOrEnd
	case last == '[':
		return stArrValueOrEnd
	case last == ':':
		return stObjValue
	case last == ',' && obj:
		return stObjKey
	case last == ',':
		return stArrValue
	case obj:
		return stObjComma
	}
	return stArrComma
}

// escapesOK checks the escaped bytes esc of the block at b[i]: each one
// of JSON's escapes, a \u with its four hex digits in b.
func escapesOK(b []byte, i int, esc uint64) bool {
	for ; esc != 0; esc &= esc - 1 {
		j := i + bits.TrailingZeros64(esc)
		c := b[j]
		if c != 'u' {
			if !shortEscape[c] {
				return false
			}
			continue
		}
		if j+5 > len(b) {
			return false
		}
		for _, h := range b[j+1 : j+5] {
			if !isHex(h) {
				return false
			}
		}
	}
	return true
}

// scalarsOK checks the numbers and literals that start in the block at
// b[i] (bits starts of scalar), reading on past the block for one that
// runs on; one that runs to the end of b is tokens'.
func (s *frameScanner) scalarsOK(b []byte, i int, scalar, starts uint64) bool {
	for ; starts != 0; starts &= starts - 1 {
		p := bits.TrailingZeros64(starts)
		n := bits.TrailingZeros64(^(scalar >> p))
		end := i + p + n
		if p+n == 64 {
			for end < len(b) && !endsScalar(b[end]) {
				end++
			}
			if end == len(b) {
				return false
			}
		}
		if !scalarOK(b[i+p : end]) {
			return false
		}
	}
	return true
}

// nOpened is how many levels frameScanner notes where containers opened.
const nOpened = 5
