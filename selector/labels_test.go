package selector

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCanonical(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", ""},
		{"   ", ""},
		{"a=b", "a=b"},
		{"a==b", "a==b"},
		{"a!=b", "a!=b"},
		{" a = b ", "a=b"},
		{"a=", "a="},
		{"a!=", "a!="},
		{"a", "a"},
		{"!a", "!a"},
		{"! a", "!a"},
		{"a in (y,x)", "a in (x,y)"},
		{"a in(x, y ,x)", "a in (x,y)"},
		{"a notin (x)", "a notin (x)"},
		{"a in ()", "a in ()"},
		{"a in (x,)", "a in (,x)"},
		{"a in (,,)", "a in ()"},
		{"z=1,a=2,m", "a=2,m,z=1"},
		{"b=1,a in (x),!c", "a in (x),b=1,!c"},
		{"in in (in, notin)", "in in (in,notin)"},
		{"notin notin (in)", "notin notin (in)"},
		{"x>3,y<20", "x>3,y<20"},
		{"example.com/tier=gold", "example.com/tier=gold"},
		{"app.kubernetes.io/name=web-1", "app.kubernetes.io/name=web-1"},
		{"a\t=\tb,\nc", "a=b,c"},
		{"A_b.C-9=Z_y.X-0", "A_b.C-9=Z_y.X-0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			s, err := Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.String())
			again, err := Parse(s.String())
			require.NoError(t, err, "canonical form must parse")
			assert.Equal(t, s, again)
			assert.Equal(t, tt.want == "", s.Empty())
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in     string
		offset int
		msg    string
	}{
		// The real server's answer to labelSelector=== (fixture list-bad-selector.json).
		{"==", 0, "found '==', expected: !, identifier, or 'end of string'"},
		{",", 0, "found ',', expected: !, identifier, or 'end of string'"},
		{"a=b,", 4, "found end of string, expected: identifier or '!' after ','"},
		{"a=b,,c", 4, "found ',', expected: identifier or '!' after ','"},
		{"a=b c", 4, "found 'c', expected: ',' or 'end of string'"},
		{"a b", 2, "found 'b', expected: one of =, ==, !=, in, notin, >, <"},
		{"!a=b", 2, "found '=', expected: ',' or 'end of string'"},
		{"!", 1, "found end of string, expected: identifier"},
		{"!=x", 0, "found '!=', expected: !, identifier"},
		{"a in", 4, "found end of string, expected: '(' to open the values of key \"a\""},
		{"a in x", 5, "found 'x', expected: '('"},
		{"a in (x", 7, "found end of string, expected: a value, ',' or ')'"},
		{"a in (x y)", 8, "found 'y', expected: a value, ',' or ')'"},
		{"a in (x=)", 7, "found '=', expected: a value, ',' or ')'"},
		{"a=(", 2, "found '(', expected: a value for key \"a\""},
		{"a=b=c", 3, "found '=', expected: ',' or 'end of string'"},
		{"a>b", 2, "found \"b\", expected: an integer after >"},
		{"a<", 2, "found \"\", expected: an integer after <"},
		// Like the server, a comparison value must also be a valid label value.
		{"a<-2", 2, `invalid value "-2" for key "a"`},
		{"a b=c", 2, "found 'b'"},
		{"-a=b", 0, `invalid key "-a"`},
		{"a-=b", 0, `name "a-" must be at most 63 characters`},
		{strings.Repeat("k", 64) + "=v", 0, "must be at most 63 characters"},
		{"a/b/c=d", 0, "at most one '/'"},
		{"/b=c", 0, "the prefix before '/' must not be empty"},
		{"a/=c", 0, "the name part must not be empty"},
		{"Example.com/b=c", 0, `prefix "Example.com" must be a lowercase DNS subdomain`},
		{"ex..com/b=c", 0, "must be a lowercase DNS subdomain"},
		{"-ex.com/b=c", 0, "must be a lowercase DNS subdomain"},
		{strings.Repeat("a", 254) + "/b=c", 0, "must be a lowercase DNS subdomain"},
		{"a=b$", 2, `invalid value "b$" for key "a"`},
		{"a=" + strings.Repeat("v", 64), 2, "must be empty or at most 63 characters"},
		{"a in (ok, -bad)", 10, `invalid value "-bad" for key "a"`},
		{"x=1, y in (a, b), a b", 20, "found 'b'"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := Parse(tt.in)
			require.Error(t, err)
			var se *SyntaxError
			require.True(t, errors.As(err, &se), "error %v is not a *SyntaxError", err)
			assert.Equal(t, tt.in, se.Input)
			assert.Equal(t, tt.offset, se.Offset, "offset in %q: %v", tt.in, err)
			assert.Contains(t, se.Msg, tt.msg)
			assert.Contains(t, err.Error(), tt.in)
		})
	}
}

func TestMatches(t *testing.T) {
	labels := Set{"app": "web", "tier": "gold", "replicas": "3", "empty": "", "word": "x1"}
	tests := []struct {
		sel  string
		want bool
	}{
		{"", true},
		{"app=web", true},
		{"app==web", true},
		{"app=db", false},
		{"missing=web", false},
		{"app!=db", true},
		{"app!=web", false},
		{"missing!=web", true},
		{"empty=", true},
		{"missing=", false},
		{"app in (db, web)", true},
		{"app in (db)", false},
		{"missing in (db)", false},
		{"app notin (db)", true},
		{"app notin (web, db)", false},
		{"missing notin (db)", true},
		{"empty in ()", true},
		{"app", true},
		{"missing", false},
		{"!missing", true},
		{"!app", false},
		{"replicas>2", true},
		{"replicas>3", false},
		{"replicas<4", true},
		{"replicas<3", false},
		{"replicas>0", true},
		{"word>0", false},
		{"missing<100", false},
		{"app=web,tier=gold", true},
		{"app=web,tier=silver", false},
		{"app=web,tier in (gold,silver),!canary,replicas>1", true},
	}
	for _, tt := range tests {
		t.Run(tt.sel, func(t *testing.T) {
			s, err := Parse(tt.sel)
			require.NoError(t, err)
			assert.Equal(t, tt.want, s.Matches(labels))
		})
	}
}

func TestMatchesNilLabels(t *testing.T) {
	s, err := Parse("!a,b notin (x)")
	require.NoError(t, err)
	assert.True(t, s.Matches(nil))
	assert.True(t, Everything().Matches(nil))
	s, err = Parse("a")
	require.NoError(t, err)
	assert.False(t, s.Matches(nil))
}

func TestRequirements(t *testing.T) {
	s, err := Parse("b in (y,x), a=1")
	require.NoError(t, err)
	reqs := s.Requirements()
	assert.Equal(t, []Requirement{
		{Key: "a", Op: Equals, Values: []string{"1"}},
		{Key: "b", Op: In, Values: []string{"x", "y"}},
	}, reqs)
	reqs[1].Values[0] = "changed"
	assert.Equal(t, "a=1,b in (x,y)", s.String(), "Requirements returns a copy")
}

func TestRequiresExactMatch(t *testing.T) {
	s, err := Parse("a=1,b==2,c in (3),d in (4,5),e!=6,f")
	require.NoError(t, err)
	for key, want := range map[string]string{"a": "1", "b": "2", "c": "3"} {
		v, ok := s.RequiresExactMatch(key)
		assert.True(t, ok, key)
		assert.Equal(t, want, v, key)
	}
	for _, key := range []string{"d", "e", "f", "g"} {
		_, ok := s.RequiresExactMatch(key)
		assert.False(t, ok, key)
	}
}

func TestSameKeyTwiceKeepsBoth(t *testing.T) {
	s, err := Parse("a!=x,a!=y")
	require.NoError(t, err)
	assert.Equal(t, "a!=x,a!=y", s.String())
	assert.False(t, s.Matches(Set{"a": "y"}))
	assert.True(t, s.Matches(Set{"a": "z"}))
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("app=web,tier in (gold,silver),!canary,example.com/zone notin (a,b)"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMatches(b *testing.B) {
	s, err := Parse("app=web,tier in (gold,silver),!canary,example.com/zone notin (a,b)")
	if err != nil {
		b.Fatal(err)
	}
	labels := Set{"app": "web", "tier": "silver", "example.com/zone": "c", "pod-template-hash": "abc"}
	b.ReportAllocs()
	for b.Loop() {
		if !s.Matches(labels) {
			b.Fatal("no match")
		}
	}
}
