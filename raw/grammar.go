package raw

import (
	"encoding/binary"
	"fmt"
)

// This file holds frameScanner's grammar: its states, the classes of its
// tokens and the table that says what each token does in each state.

// The grammar's states: what may come next, and whether the innermost
// container is an object or an array. Each has a twin, deep+state, for a
// container at maxDepth, where nothing may open.
const (
	stStart         = iota // the value's first byte: '{' or '['
	stObjKeyOrEnd          // after '{'
	stObjKey               // after ',' in an object
	stObjColon             // after a key
	stObjValue             // after ':'
	stObjComma             // after a member: ',' or '}'
	stArrValueOrEnd        // after '['
	stArrValue             // after ',' in an array
	stArrComma             // after an element: ',' or ']'
	stEnd                  // after the value
	deep                   // added to a state at maxDepth
	nStates         = 2 * deep
)

// An entry of grammar is the next state, with a flag: the token opens a
// container (the state is the one inside it), or closes one (the state
// after it is the one saved when it opened, then the low bits say whether
// a colon or comma came with it), or needs more than the table.
const (
	stateBits = 0x1f
	opens     = 0x20
	closes    = 0x40
	slow      = 0x80

	actScalar   = slow
	actMismatch = slow | 1 // a bracket closing the other kind of container
	actEmptyTop = slow | 2 // the value is {} or []
	actFail     = slow | 3
)

// Token kinds, by a token's byte: a string (at its closing quote), ':',
// ',', '{', '[', '}', ']', and anything else (a number or literal, or
// garbage).
const (
	kString = iota
	kColon
	kComma
	kOpenObj
	kOpenArr
	kCloseObj
	kCloseArr
	kOther
	nKinds
)

// A token also takes in the byte right after it when that is a colon or a
// comma after a string or a closing bracket, or the closing bracket of an
// opening one ({} and []): the scanner drops those bytes from its tokens,
// so that a key and its colon, a value and its comma, an empty object, are
// one step each. A token's class is its kind and what it took in.
const (
	withNone = iota
	withColon
	withComma
	withCloseObj
	withCloseArr
	nWith
	nClasses = nKinds * nWith
)

// tokenKind is a token's kind by its byte; classes[kind<<8|next] the class
// of a token of the kind followed by the byte next.
var tokenKind, classes = func() (k [256]uint8, cls [nKinds << 8]uint8) {
	for c := range k {
		k[c] = kOther
	}
	for kind, c := range []byte{'"', ':', ',', '{', '[', '}', ']'} {
		k[c] = uint8(kind)
	}
	for kind := range nKinds {
		for next := range 256 {
			with := withNone
			switch {
			case (kind == kString || kind == kCloseObj || kind == kCloseArr) && next == ':':
				with = withColon
			case (kind == kString || kind == kCloseObj || kind == kCloseArr) && next == ',':
				with = withComma
			case (kind == kOpenObj || kind == kOpenArr) && next == '}':
				with = withCloseObj
			case (kind == kOpenObj || kind == kOpenArr) && next == ']':
				with = withCloseArr
			}
			cls[kind<<8|next] = uint8(kind*nWith + with)
		}
	}
	return k, cls
}()

// tokenClass returns the class of the token c followed by next.
func tokenClass(c, next byte) uint8 {
	return classes[(uint(tokenKind[c])<<8|uint(next))&(nKinds<<8-1)]
}

// pairClasses is tokenClass by the two bytes as one little-endian
// number (c | next<<8): one load of both bytes and one lookup, where
// tokenClass takes two of each. Of its 64 KiB a token walk touches a few
// cache lines: two per byte that follows tokens.
var pairClasses = func() (t [1 << 16]uint8) {
	for pair := range t {
		t[pair] = tokenClass(byte(pair), byte(pair>>8))
	}
	return t
}()

// afterValue is the state after a value that starts in a state.
var afterValue = func() (a [nStates]uint8) {
	a[stStart], a[stObjValue] = stEnd, stObjComma
	a[stArrValueOrEnd], a[stArrValue] = stArrComma, stArrComma
	for st := range deep {
		a[deep+st] = deep + a[st]
	}
	return a
}()

// grammar[class][state] is what a token does. (Indexed by class first,
// since the class is known before the state the last token left.)
var grammar = func() (g [nStates][nClasses]uint8) {
	for st := range uint8(deep) {
		for cls := range uint8(nClasses) {
			e := classStep(st, cls)
			g[st][cls] = e
			kind := cls / nWith
			switch {
			case kind == kOpenObj || kind == kOpenArr:
				g[deep+st][cls] = actFail // nested too deep
			case e < opens && e != stEnd:
				g[deep+st][cls] = deep + e
			default:
				g[deep+st][cls] = e
			}
		}
	}
	return g
}()

// steps is grammar as tokens reads it: row st<<6, column class; an entry
// that only moves the state is the next state's row, so that the next
// index is one OR away, and any other is grammar's entry plus notPlain.
var steps = func() (t [32 << 6]uint16) {
	for st := range grammar {
		for cls, e := range grammar[st] {
			t[st<<6|cls] = notPlain | uint16(e)
			if e < opens {
				t[st<<6|cls] = uint16(e) << 6
			}
		}
	}
	return t
}()

const notPlain = 0x8000

// classStep is what the token class cls does in state st.
func classStep(st, cls uint8) uint8 {
	kind, with := cls/nWith, cls%nWith
	e := kindStep(st, kind)
	switch {
	case with == withNone || e >= slow:
		return e
	case with == withColon || with == withComma:
		if e&closes != 0 {
			return closes | with
		}
		return kindStep(e, kColon+with-withColon)
	}
	// An empty container: its own step, at once.
	if st == stStart {
		if kindStep(e&stateBits, kCloseObj+with-withCloseObj) != closes {
			return actMismatch
		}
		return actEmptyTop
	}
	switch kindStep(e&stateBits, kCloseObj+with-withCloseObj) {
	case closes:
		return afterValue[st]
	case actMismatch:
		return actMismatch
	}
	return actFail
}

// kindStep is what a token of the kind does in state st, taking nothing in.
func kindStep(st, kind uint8) uint8 {
	const f = actFail
	o, a, c, v, m := uint8(opens|stObjKeyOrEnd), uint8(opens|stArrValueOrEnd), uint8(closes), uint8(actScalar), uint8(actMismatch)
	steps := [deep][nKinds]uint8{
		// Columns: string, ':', ',', '{', '[', '}', ']', other.
		stStart:         {f, f, f, o, a, f, f, f},
		stObjKeyOrEnd:   {stObjColon, f, f, f, f, c, m, f},
		stObjKey:        {stObjColon, f, f, f, f, f, f, f},
		stObjColon:      {f, stObjValue, f, f, f, f, f, f},
		stObjValue:      {stObjComma, f, f, o, a, f, f, v},
		stObjComma:      {f, f, stObjKey, f, f, c, m, f},
		stArrValueOrEnd: {stArrComma, f, f, o, a, m, c, v},
		stArrValue:      {stArrComma, f, f, o, a, f, f, v},
		stArrComma:      {f, f, stArrValue, f, f, m, c, f},
		stEnd:           {f, f, f, f, f, f, f, f},
	}
	if st >= deep {
		return f
	}
	return steps[st][kind]
}

// wrongToken describes the token c of class cls in state st, which wants
// another.
func wrongToken(st, cls uint8, c byte) error {
	if st >= deep {
		if kind := cls / nWith; kind == kOpenObj || kind == kOpenArr {
			return fmt.Errorf("values nested deeper than %d", maxDepth)
		}
		st -= deep
	}
	if grammar[st][cls] == actMismatch {
		return errMismatch
	}
	wants := [deep]string{"'{' or '['", "a key or '}'", "a key", "':' after a key", "a value",
		"',' or '}'", "a value or ']'", "a value", "',' or ']'", "nothing"}
	found := fmt.Sprintf("%q", c)
	if with := cls % nWith; with != withNone {
		found += fmt.Sprintf(" and %q", ":,}]"[with-withColon])
	}
	return fmt.Errorf("expected %s, found %s", wants[st], found)
}

// classifyJSONWords is classifyJSON in portable Go, as classifyWords is
// classify.
func classifyJSONWords(p *[64]byte) (quote, backslash, open, close, separator, space, control uint64) {
	const highs, fold, below20 = 0x8080808080808080, 0x2020202020202020, 0x6060606060606060
	for k := range 8 {
		w := binary.LittleEndian.Uint64(p[8*k:])
		lo := w &^ highs
		ascii := ^w & highs
		f := lo | fold
		shift := uint(7-k) & 7
		quote |= (eqLow(lo, '"') & ascii) >> shift
		backslash |= (eqLow(lo, '\\') & ascii) >> shift
		open |= (eqLow(f, '{') & ascii) >> shift
		close |= (eqLow(f, '}') & ascii) >> shift
		separator |= ((eqLow(lo, ':') | eqLow(lo, ',')) & ascii) >> shift
		space |= (eqLow(lo, ' ') & ascii) >> shift
		// lo+0x60 stays under 0x80 exactly for the bytes below 0x20.
		control |= (^(lo + below20) & ascii) >> shift
	}
	return transpose8(quote), transpose8(backslash), transpose8(open), transpose8(close),
		transpose8(separator), transpose8(space), transpose8(control)
}
