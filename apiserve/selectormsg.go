package apiserve

import (
	"fmt"
	"strings"
)

// The real server parses selectors with its own parser, whose error
// messages differ from package selector's, which explains errors to
// people. selectorMessage replays that parser's steps on a selector
// package selector refused, to answer with the server's words; where it
// does not know them it keeps selector's message.

// labelMessage is kube-apiserver's message for a label selector that does
// not parse, or "" if its steps find nothing wrong.
func labelMessage(s string) string {
	p := &labelParser{toks: lexLabels(s)}
	for {
		switch t := p.peek(true); t.kind {
		case "ident", "!":
			if err := p.requirement(); err != "" {
				return "unable to parse requirement: " + err
			}
			switch t := p.next(true); t.kind {
			case "end":
				return ""
			case ",":
				if t2 := p.peek(true); t2.kind != "ident" && t2.kind != "!" {
					return fmt.Sprintf("found '%s', expected: identifier after ','", t2.text)
				}
			default:
				return fmt.Sprintf("found '%s', expected: ',' or 'end of string'", t.text)
			}
		case "end":
			return ""
		default:
			return fmt.Sprintf("found '%s', expected: !, identifier, or 'end of string'", t.text)
		}
	}
}

type labelToken struct{ kind, text string }

// lexLabels splits a label selector as the server's lexer does: runs of
// the symbols =!(),<> as one operator (unknown runs are errors), and words
// up to a blank or a symbol.
func lexLabels(s string) []labelToken {
	var out []labelToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case strings.IndexByte("=!(),<>", c) >= 0:
			j := i + 1
			for j < len(s) && strings.IndexByte("=!(),<>", s[j]) >= 0 && isOperator(s[i:j+1]) {
				j++
			}
			kind := s[i:j]
			if !isOperator(kind) {
				kind = "error"
			}
			out = append(out, labelToken{kind, s[i:j]})
			i = j
		default:
			j := i
			for j < len(s) && strings.IndexByte("=!(),<> \t\r\n", s[j]) < 0 {
				j++
			}
			out = append(out, labelToken{"ident", s[i:j]})
			i = j
		}
	}
	return append(out, labelToken{"end", ""})
}

func isOperator(s string) bool {
	switch s {
	case "!", "!=", "(", ")", ",", "<", "=", "==", ">":
		return true
	}
	return false
}

type labelParser struct {
	toks []labelToken
	pos  int
}

// peek returns the next token; outside values, the words in and notin are
// operators.
func (p *labelParser) peek(value bool) labelToken {
	t := p.toks[p.pos]
	if !value && t.kind == "ident" && (t.text == "in" || t.text == "notin") {
		t.kind = t.text
	}
	return t
}

func (p *labelParser) next(value bool) labelToken {
	t := p.peek(value)
	if p.pos < len(p.toks)-1 {
		p.pos++
	}
	return t
}

func (p *labelParser) requirement() string {
	t := p.next(true)
	exists := true
	if t.kind == "!" {
		exists = false
		t = p.next(true)
	}
	if t.kind != "ident" {
		return fmt.Sprintf("found '%s', expected: identifier", t.text)
	}
	if msg := keyMessage(t.text); msg != "" {
		return msg
	}
	if n := p.peek(true).kind; n == "end" || n == "," || !exists {
		return ""
	}
	op := p.next(false)
	switch op.kind {
	case "in", "notin":
		return p.values()
	case "=", "==", "!=", "<", ">":
		if n := p.peek(true).kind; n == "end" || n == "," {
			return ""
		}
		if v := p.next(true); v.kind != "ident" {
			return fmt.Sprintf("found '%s', expected: identifier", v.text)
		}
		return ""
	}
	return fmt.Sprintf("found '%s', expected: in, notin, =, ==, !=, gt, lt", op.text)
}

func (p *labelParser) values() string {
	if t := p.next(true); t.kind != "(" {
		return fmt.Sprintf("found '%s' expected: '('", t.text)
	}
	switch t := p.peek(true); t.kind {
	case ")":
		p.next(true)
		return ""
	case "ident", ",":
	default:
		return fmt.Sprintf("found '%s', expected: ',', ')' or identifier", t.text)
	}
	for {
		switch t := p.next(true); t.kind {
		case "ident":
			switch n := p.peek(true); n.kind {
			case ",":
				p.next(true)
			case ")":
				p.next(true)
				return ""
			default:
				return fmt.Sprintf("found '%s', expected: ',' or ')'", n.text)
			}
		case ",":
			if n := p.peek(true).kind; n == ")" {
				p.next(true)
				return ""
			}
		case ")":
			return ""
		default:
			return fmt.Sprintf("found '%s', expected: ',', or identifier", t.text)
		}
	}
}

// keyMessage is the server's message for a label key whose prefix before
// the slash is empty or whose name part is empty or not a valid label
// name, each problem in the order the server lists them; other key errors
// are left to package selector.
func keyMessage(k string) string {
	var errs []string
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		if i == 0 {
			errs = append(errs, "prefix part must be non-empty")
		}
		name = k[i+1:]
	}
	switch {
	case name == "":
		errs = append(errs, "name part must be non-empty")
	case len(name) > 63:
		errs = append(errs, "name part must be no more than 63 bytes")
	}
	if name == "" || !isName(name) {
		errs = append(errs, "name part must consist of alphanumeric characters, '-', '_' or '.', "+
			"and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "+
			"regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
	}
	if len(errs) == 0 {
		return ""
	}
	return fmt.Sprintf("<nil>: Invalid value: %q: %s", k, strings.Join(errs, "; "))
}

func isName(s string) bool {
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// fieldMessage is kube-apiserver's message for a field selector term with
// no operator, or "".
func fieldMessage(s string) string {
	for _, term := range splitUnescaped(s) {
		if term != "" && !strings.Contains(term, "=") {
			return fmt.Sprintf("invalid selector: '%s'; can't understand '%s'", s, term)
		}
	}
	return ""
}

func splitUnescaped(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}
