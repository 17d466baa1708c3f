package selector

import (
	"slices"
	"strings"
)

// Fields is what a field selector reads: the values of one object's fields
// by dotted path, such as "metadata.name" or "status.phase".
type Fields interface {
	// Get returns the value at path and whether the object has it.
	Get(path string) (value string, ok bool)
}

// FieldTerm is one comma-separated term of a field selector.
type FieldTerm struct {
	Path  string
	Op    Operator // Equals or NotEquals; "==" parses as Equals
	Value string
}

// Matches reports whether the fields satisfy the term. A missing path reads
// as the empty string.
func (t FieldTerm) Matches(f Fields) bool {
	v, _ := f.Get(t.Path)
	return (v == t.Value) == (t.Op == Equals)
}

// String returns the term in selector syntax, with '\', ',' and '=' in the
// value escaped.
func (t FieldTerm) String() string {
	return t.Path + string(t.Op) + escapeFieldValue(t.Value)
}

// FieldSelector is a parsed field selector: terms that must all hold. The
// zero value matches everything.
type FieldSelector struct {
	terms []FieldTerm
}

// ParseFields parses a field selector such as
// "metadata.namespace=default,status.phase!=Running". Values may contain
// '\,', '\=' and '\\'. Blanks around paths and values and empty terms are
// ignored, so the empty string selects everything. Errors are *SyntaxError.
func ParseFields(s string) (FieldSelector, error) {
	var terms []FieldTerm
	for start := 0; start <= len(s); {
		end := termEnd(s, start)
		term, err := parseFieldTerm(s, start, end)
		if err != nil {
			return FieldSelector{}, err
		}
		if term != nil {
			terms = append(terms, *term)
		}
		start = end + 1
	}
	slices.SortStableFunc(terms, func(a, b FieldTerm) int { return strings.Compare(a.Path, b.Path) })
	return FieldSelector{terms: terms}, nil
}

// termEnd returns the index of the first unescaped comma at or after start,
// or len(s).
func termEnd(s string, start int) int {
	for i := start; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ',':
			return i
		}
	}
	return len(s)
}

// parseFieldTerm parses s[start:end]; it returns nil for a blank term.
func parseFieldTerm(s string, start, end int) (*FieldTerm, error) {
	raw := s[start:end]
	if strings.TrimSpace(raw) == "" {
		return nil, nil
	}
	fail := func(off int, msg string) error {
		return &SyntaxError{Input: s, Offset: start + off, Msg: msg}
	}
	opAt, op, opLen := -1, Equals, 0
	for i := 0; i < len(raw); i++ {
		switch {
		case strings.HasPrefix(raw[i:], "!="):
			op, opLen = NotEquals, 2
		case strings.HasPrefix(raw[i:], "=="):
			op, opLen = Equals, 2
		case raw[i] == '=':
			op, opLen = Equals, 1
		default:
			continue
		}
		opAt = i
		break
	}
	if opAt < 0 {
		return nil, fail(0, "found "+quote(strings.TrimSpace(raw))+", expected: path=value, path==value or path!=value")
	}
	path := strings.TrimSpace(raw[:opAt])
	if path == "" {
		return nil, fail(opAt, "found "+quote(string(op))+", expected: a field path such as metadata.name before it")
	}
	for i := 0; i < len(path); i++ {
		if c := path[i]; !isAlnum(c) && c != '.' && c != '_' && c != '-' && c != '/' {
			return nil, fail(strings.Index(raw, path)+i, "invalid field path "+quote(path)+": only letters, digits, '.', '_', '-' and '/' are allowed")
		}
	}
	valStart := opAt + opLen
	value, bad, msg := unescapeFieldValue(strings.TrimSpace(raw[valStart:]))
	if msg != "" {
		lead := len(raw[valStart:]) - len(strings.TrimLeft(raw[valStart:], " \t\r\n"))
		return nil, fail(valStart+lead+bad, msg)
	}
	return &FieldTerm{Path: path, Op: op, Value: value}, nil
}

func quote(s string) string { return "'" + s + "'" }

// unescapeFieldValue undoes the escaping of a value. On failure it returns
// the offset of the bad byte and a message.
func unescapeFieldValue(v string) (string, int, string) {
	if !strings.ContainsAny(v, `\=`) {
		return v, 0, ""
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			if i+1 == len(v) || !strings.ContainsRune(`\,=`, rune(v[i+1])) {
				return "", i, `invalid escape sequence in value: only \\, \, and \= are allowed`
			}
			i++
			b.WriteByte(v[i])
		case '=':
			return "", i, `found unescaped '=' in value, expected: \=`
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), 0, ""
}

var fieldEscaper = strings.NewReplacer(`\`, `\\`, `,`, `\,`, `=`, `\=`)

func escapeFieldValue(v string) string { return fieldEscaper.Replace(v) }

// Matches reports whether the fields satisfy every term. A nil Fields is an
// object whose every field reads as empty.
func (s FieldSelector) Matches(f Fields) bool {
	if f == nil {
		f = Set(nil)
	}
	for _, t := range s.terms {
		if !t.Matches(f) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector matches everything.
func (s FieldSelector) Empty() bool { return len(s.terms) == 0 }

// Terms returns a copy of the terms, sorted by path.
func (s FieldSelector) Terms() []FieldTerm { return slices.Clone(s.terms) }

// RequiresExactMatch returns the value path must have for the selector to
// match, if a term pins it (path=value).
func (s FieldSelector) RequiresExactMatch(path string) (string, bool) {
	for _, t := range s.terms {
		if t.Path == path && t.Op == Equals {
			return t.Value, true
		}
	}
	return "", false
}

// String returns the selector in canonical form: terms sorted by path, "=="
// written as "=", values escaped. Parsing it yields an equal selector.
func (s FieldSelector) String() string {
	parts := make([]string, len(s.terms))
	for i, t := range s.terms {
		parts[i] = t.String()
	}
	return strings.Join(parts, ",")
}
