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
		s.keep(d)
		inObject, d2, top2, ok := s.walk(i, w, (open|close)&^(empty|empty<<1), st < stArrValueOrEnd, d, top)
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
		st, d, top = endState(w, st, inside, strOpen, keyClose, colon, comma, inObject), d2, top2
		if i == 0 {
			s.held = 0 // any number at byte 0 was checked whole
		}
		carry, escIn, scalarIn = uint64(int64(inside)>>63), escOut, scalar>>63
	}
	s.state, s.depth, s.top = st, d, top
	return i, carry, escIn, scalarIn
}

// fastUndo is what fast restores when it leaves a block to tokens: what
// walk changed that tokens reads, which but for the states of the
// containers the block closes (at most 64 levels) and the spans noted
// near the top is little.
type fastUndo struct {
	depth    int // the block's
	low      int // stack[low:depth] are saved, in reverse order
	stack    [64]uint8
	opened   [nOpened]int
	child    valueRange
	n, nDeep int
	// openedSet says opened is saved.
	openedSet bool
}

// keep starts keeping what rollback restores, at depth d.
func (s *frameScanner) keep(d int) {
	u := &s.undo
	u.depth, u.low, u.child, u.openedSet = d, d, s.child, false
	if sn := s.spans; sn != nil {
		u.n, u.nDeep = sn.n, sn.nDeep
	}
}

// rollback restores the state keep saw.
func (s *frameScanner) rollback() {
	u := &s.undo
	for k := u.low; k < u.depth; k++ {
		s.stack[k] = u.stack[u.depth-1-k]
	}
	if u.openedSet {
		s.opened = u.opened
	}
	s.child = u.child
	if sn := s.spans; sn != nil {
		sn.n, sn.nDeep = u.n, u.nDeep
	}
}

// walk steps through the brackets m of the block at b[i] (w), as tokens
// would: it saves states on the stack, notes spans and moves the depth d
// and top, the state after the innermost container. obj says whether the
// innermost container is an object at the block's start; inObject marks
// the bytes where it is. Far from the top and from the depth limit a
// bracket is a few instructions without a branch, whichever it is. ok is
// false at a bracket that does not match, one that nests too deep, or
// where the value ends.
func (s *frameScanner) walk(i int, w *[65]byte, m uint64, obj bool, d int, top uint8) (inObject uint64, depth int, after uint8, ok bool) {
	var toggles, bad, kind uint64
	if obj {
		kind, inObject = 1, ^uint64(0)
	}
	low := s.undo.low
	for ; m != 0; m &= m - 1 {
		p := bits.TrailingZeros64(m) & 63
		c := w[p]
		isObj := uint64(c>>5) & 1
		open := int(c>>1) & 1
		k := d - 1 + open // the slot an opening bracket fills, a closing one empties
		if k < low {
			// A container open when the block began closes: keep its
			// state, which a container opened in its place overwrites.
			s.undo.stack[(s.undo.depth-1-k)&63] = s.stack[k]
			low = k
			s.undo.low = k
		}
		if d > s.noteBelow && d < maxDepth-1 {
			old := s.stack[k]
			closedObj := uint64(0)
			if top == stObjComma {
				closedObj = 1
			}
			// Selects without branches: opening, save top and enter;
			// closing, check the kind and leave.
			sel := -uint64(open)
			s.stack[k] = old ^ (old^top)&uint8(sel)
			newTop := stArrComma - (stArrComma-stObjComma)*uint8(kind)
			top = old ^ (old^newTop)&uint8(sel)
			bad |= (kind ^ isObj) &^ sel
			isObj = closedObj ^ (closedObj^isObj)&sel
			d = k + open
		} else {
			var ok bool
			if isObj, d, top, ok = s.walkBracket(i, p, c, kind, d, top); !ok {
				return 0, 0, 0, false
			}
		}
		toggles |= (kind ^ isObj) << p
		kind = isObj
	}
	return inObject ^ prefixXOR(toggles), d, top, bad == 0
}

// walkBracket is walk's step for the bracket c at b[i+p], the innermost
// container's kind being kind, with branches: near the top, where spans
// are noted and the value ends, and near the depth limit. It returns the
// kind after it.
func (s *frameScanner) walkBracket(i, p int, c byte, kind uint64, d int, top uint8) (uint64, int, uint8, bool) {
	isObj := uint64(c>>5) & 1
	if c&2 != 0 {
		if d >= maxDepth-1 {
			return 0, 0, 0, false
		}
		if !s.undo.openedSet {
			s.undo.opened, s.undo.openedSet = s.opened, true
		}
		s.stack[d] = top
		top = stArrComma
		if kind == 1 {
			top = stObjComma
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
