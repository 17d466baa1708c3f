package selector

import (
	"errors"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *SyntaxError pointing inside the input, and that the canonical form of a
// parsed selector parses back to the same selector.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "a=b", "a==b,c!=d", "a in (x,y),b notin (z)", "!a,b", "x>1,y<2",
		"in in (in)", "a in (,)", "example.com/a=b", "==", "a=b,", "a in (x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): error %v is not a *SyntaxError", in, err)
			}
			if se.Offset < 0 || se.Offset > len(in) {
				t.Fatalf("Parse(%q): offset %d outside the input", in, se.Offset)
			}
			return
		}
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", in, s.String(), err)
		}
		if again.String() != s.String() {
			t.Fatalf("round trip of %q: %q then %q", in, s.String(), again.String())
		}
	})
}

// FuzzParseFields is FuzzParse for field selectors.
func FuzzParseFields(f *testing.F) {
	for _, seed := range []string{
		"", "metadata.name=a", "a==b,c!=d", `a=x\,y\=z\\`, "a=b,", "=", "a", `a=\q`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseFields(in)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseFields(%q): error %v is not a *SyntaxError", in, err)
			}
			if se.Offset < 0 || se.Offset > len(in) {
				t.Fatalf("ParseFields(%q): offset %d outside the input", in, se.Offset)
			}
			return
		}
		again, err := ParseFields(s.String())
		if err != nil {
			t.Fatalf("ParseFields(%q).String() = %q does not parse: %v", in, s.String(), err)
		}
		if again.String() != s.String() {
			t.Fatalf("round trip of %q: %q then %q", in, s.String(), again.String())
		}
	})
}
