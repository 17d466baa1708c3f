package selector

import (
	"slices"
	"strconv"
	"strings"
)

// Labels is what a label selector reads: the labels of one object.
type Labels interface {
	// Get returns the value of the label key and whether the object has it.
	Get(key string) (value string, ok bool)
}

// Set is a plain map of labels (or of field paths to values). It satisfies
// both Labels and Fields.
type Set map[string]string

// Get returns s[key] and whether key is present.
func (s Set) Get(key string) (string, bool) {
	v, ok := s[key]
	return v, ok
}

// Operator relates a label key to the values of a Requirement.
type Operator string

// The operators of label selectors. Field selectors use Equals and NotEquals.
const (
	Equals       Operator = "="
	DoubleEquals Operator = "=="
	NotEquals    Operator = "!="
	In           Operator = "in"
	NotIn        Operator = "notin"
	Exists       Operator = "exists"
	DoesNotExist Operator = "!"
	GreaterThan  Operator = ">"
	LessThan     Operator = "<"
)

// Requirement is one comma-separated term of a label selector.
type Requirement struct {
	Key string
	Op  Operator
	// Values are sorted and free of duplicates: one value for the equality
	// and comparison operators, at least one for In and NotIn, none for
	// Exists and DoesNotExist.
	Values []string
}

// Matches reports whether the labels satisfy the requirement.
func (r Requirement) Matches(l Labels) bool {
	v, ok := l.Get(r.Key)
	switch r.Op {
	case Equals, DoubleEquals, In:
		return ok && slices.Contains(r.Values, v)
	case NotEquals, NotIn:
		return !ok || !slices.Contains(r.Values, v)
	case Exists:
		return ok
	case DoesNotExist:
		return !ok
	case GreaterThan, LessThan:
		if !ok || len(r.Values) != 1 {
			return false
		}
		have, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.Op == GreaterThan {
			return have > want
		}
		return have < want
	}
	return false
}

// String returns the requirement in selector syntax.
func (r Requirement) String() string {
	switch r.Op {
	case Exists:
		return r.Key
	case DoesNotExist:
		return "!" + r.Key
	case In, NotIn:
		return r.Key + " " + string(r.Op) + " (" + strings.Join(r.Values, ",") + ")"
	}
	var v string
	if len(r.Values) > 0 {
		v = r.Values[0]
	}
	return r.Key + string(r.Op) + v
}

// Selector is a parsed label selector: requirements that must all hold. The
// zero value has no requirement and matches everything.
type Selector struct {
	reqs []Requirement
}

// Everything returns the selector that matches every set of labels.
func Everything() Selector { return Selector{} }

// Matches reports whether the labels satisfy every requirement. A nil Labels
// is an object without labels.
func (s Selector) Matches(l Labels) bool {
	if l == nil {
		l = Set(nil)
	}
	for _, r := range s.reqs {
		if !r.Matches(l) {
			return false
		}
	}
	return true
}

// Empty reports whether the selector matches everything.
func (s Selector) Empty() bool { return len(s.reqs) == 0 }

// Requirements returns a copy of the requirements, sorted by key.
func (s Selector) Requirements() []Requirement {
	out := make([]Requirement, len(s.reqs))
	for i, r := range s.reqs {
		r.Values = slices.Clone(r.Values)
		out[i] = r
	}
	return out
}

// RequiresExactMatch returns the value the key must have for the selector to
// match, if a requirement pins it to one value (key=v, key==v or key in (v)).
func (s Selector) RequiresExactMatch(key string) (string, bool) {
	for _, r := range s.reqs {
		if r.Key != key || len(r.Values) != 1 {
			continue
		}
		switch r.Op {
		case Equals, DoubleEquals, In:
			return r.Values[0], true
		}
	}
	return "", false
}

// String returns the selector in canonical form: requirements sorted by key,
// set values sorted, joined by commas. Parsing it yields an equal selector.
func (s Selector) String() string {
	parts := make([]string, len(s.reqs))
	for i, r := range s.reqs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}
