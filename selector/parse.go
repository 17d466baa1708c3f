package selector

import (
	"fmt"
	"slices"
	"strconv"
)

// SyntaxError is a selector that cannot be parsed or that breaks the
// server's rules for keys and values.
type SyntaxError struct {
	Input  string // the whole selector
	Offset int    // byte offset in Input where the problem starts
	Msg    string // what was found and what was expected
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("selector %q: at offset %d: %s", e.Input, e.Offset, e.Msg)
}

type tokenKind int

const (
	tokEnd tokenKind = iota
	tokIdent
	tokIn     // the keyword in
	tokNotIn  // the keyword notin
	tokEq     // =
	tokDEq    // ==
	tokNEq    // !=
	tokNot    // !
	tokGT     // >
	tokLT     // <
	tokLParen // (
	tokRParen // )
	tokComma  // ,
)

type token struct {
	kind tokenKind
	text string
	pos  int
}

// describe names the token the way an error message should quote it.
func (t token) describe() string {
	if t.kind == tokEnd {
		return "end of string"
	}
	return "'" + t.text + "'"
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSymbol(c byte) bool { return symbolKind(c) != tokEnd }

// symbolKind returns the token a one-byte operator symbol stands for, or
// tokEnd if c is not one.
func symbolKind(c byte) tokenKind {
	switch c {
	case '=':
		return tokEq
	case '!':
		return tokNot
	case '(':
		return tokLParen
	case ')':
		return tokRParen
	case ',':
		return tokComma
	case '>':
		return tokGT
	case '<':
		return tokLT
	}
	return tokEnd
}

// lex splits a label selector into tokens. Identifiers are any run of bytes
// that are neither blanks nor operator symbols; whether they make valid keys
// or values is checked by the parser, which knows which they are.
func lex(s string) []token {
	var toks []token
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(toks, token{kind: tokEnd, pos: i})
		}
		start := i
		if isSymbol(s[i]) {
			var kind tokenKind
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch {
			case two == "==":
				kind, i = tokDEq, i+2
			case two == "!=":
				kind, i = tokNEq, i+2
			default:
				kind = symbolKind(s[i])
				i++
			}
			toks = append(toks, token{kind: kind, text: s[start:i], pos: start})
			continue
		}
		for i < len(s) && !isSpace(s[i]) && !isSymbol(s[i]) {
			i++
		}
		kind := tokIdent
		switch s[start:i] {
		case "in":
			kind = tokIn
		case "notin":
			kind = tokNotIn
		}
		toks = append(toks, token{kind: kind, text: s[start:i], pos: start})
	}
}

type parser struct {
	input string
	toks  []token
	i     int
}

// peek returns the next token. Where a key or value is expected the keywords
// in and notin are plain identifiers, so "in in (in)" is a valid selector.
func (p *parser) peek(asValue bool) token {
	t := p.toks[p.i]
	if asValue && (t.kind == tokIn || t.kind == tokNotIn) {
		t.kind = tokIdent
	}
	return t
}

func (p *parser) next(asValue bool) token {
	t := p.peek(asValue)
	if t.kind != tokEnd {
		p.i++
	}
	return t
}

func (p *parser) fail(pos int, format string, args ...any) error {
	return &SyntaxError{Input: p.input, Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a label selector. The empty string (or only blanks) selects
// everything. Errors are *SyntaxError.
func Parse(s string) (Selector, error) {
	p := &parser{input: s, toks: lex(s)}
	var reqs []Requirement
	for {
		t := p.peek(true)
		switch t.kind {
		case tokEnd: // only blanks: a comma is always followed by a requirement
			return Selector{}, nil
		case tokIdent, tokNot:
		default:
			return Selector{}, p.fail(t.pos, "found %s, expected: !, identifier, or 'end of string'", t.describe())
		}
		r, err := p.requirement()
		if err != nil {
			return Selector{}, err
		}
		reqs = append(reqs, r)
		switch t := p.next(true); t.kind {
		case tokEnd:
			slices.SortStableFunc(reqs, func(a, b Requirement) int {
				switch {
				case a.Key < b.Key:
					return -1
				case a.Key > b.Key:
					return 1
				}
				return 0
			})
			return Selector{reqs: reqs}, nil
		case tokComma:
			if n := p.peek(true); n.kind != tokIdent && n.kind != tokNot {
				return Selector{}, p.fail(n.pos, "found %s, expected: identifier or '!' after ','", n.describe())
			}
		default:
			return Selector{}, p.fail(t.pos, "found %s, expected: ',' or 'end of string'", t.describe())
		}
	}
}

func (p *parser) requirement() (Requirement, error) {
	t := p.next(true)
	negated := t.kind == tokNot
	if negated {
		t = p.next(true)
	}
	if t.kind != tokIdent {
		return Requirement{}, p.fail(t.pos, "found %s, expected: identifier", t.describe())
	}
	if msg := checkKey(t.text); msg != "" {
		return Requirement{}, p.fail(t.pos, "%s", msg)
	}
	r := Requirement{Key: t.text}
	if negated {
		r.Op = DoesNotExist
		return r, nil
	}
	if n := p.peek(false); n.kind == tokEnd || n.kind == tokComma {
		r.Op = Exists
		return r, nil
	}
	op := p.next(false)
	switch op.kind {
	case tokIn, tokNotIn:
		r.Op = In
		if op.kind == tokNotIn {
			r.Op = NotIn
		}
		values, err := p.valueSet(r.Key)
		if err != nil {
			return Requirement{}, err
		}
		r.Values = values
		return r, nil
	case tokEq:
		r.Op = Equals
	case tokDEq:
		r.Op = DoubleEquals
	case tokNEq:
		r.Op = NotEquals
	case tokGT:
		r.Op = GreaterThan
	case tokLT:
		r.Op = LessThan
	default:
		return Requirement{}, p.fail(op.pos, "found %s, expected: one of =, ==, !=, in, notin, >, <, ',' or end of string after key %q", op.describe(), r.Key)
	}
	v, pos, err := p.singleValue(r.Key)
	if err != nil {
		return Requirement{}, err
	}
	if r.Op == GreaterThan || r.Op == LessThan {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return Requirement{}, p.fail(pos, "found %q, expected: an integer after %s", v, r.Op)
		}
	}
	r.Values = []string{v}
	return r, nil
}

// singleValue reads the value after =, ==, !=, > or <. A missing value is
// the empty string, as in "tier=".
func (p *parser) singleValue(key string) (string, int, error) {
	t := p.peek(true)
	switch t.kind {
	case tokEnd, tokComma:
		return "", t.pos, nil
	case tokIdent:
		p.next(true)
		if msg := checkValue(key, t.text); msg != "" {
			return "", t.pos, p.fail(t.pos, "%s", msg)
		}
		return t.text, t.pos, nil
	}
	return "", t.pos, p.fail(t.pos, "found %s, expected: a value for key %q", t.describe(), key)
}

// valueSet reads "(a, b, c)". Like the server, it takes an omitted element
// as the empty value: "()" and "(a,)" both contain "".
func (p *parser) valueSet(key string) ([]string, error) {
	if t := p.next(true); t.kind != tokLParen {
		return nil, p.fail(t.pos, "found %s, expected: '(' to open the values of key %q", t.describe(), key)
	}
	var values []string
	for {
		v := ""
		t := p.peek(true)
		if t.kind == tokIdent {
			p.next(true)
			if msg := checkValue(key, t.text); msg != "" {
				return nil, p.fail(t.pos, "%s", msg)
			}
			v = t.text
		}
		values = append(values, v)
		switch t := p.next(true); t.kind {
		case tokComma:
		case tokRParen:
			slices.Sort(values)
			return slices.Compact(values), nil
		default:
			return nil, p.fail(t.pos, "found %s, expected: a value, ',' or ')' in the values of key %q", t.describe(), key)
		}
	}
}
