package raw

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

// feedBytewise is feed done one byte at a time: the reference the block
// scanner must match.
func (s *containerScanner) feedBytewise(b []byte) (int, bool) {
	i := 0
	if s.esc && len(b) > 0 {
		s.esc, i = false, 1
	}
	return s.bytewise(b, i)
}

// scanBoth feeds data, cut into pieces of the given sizes (cycled), to the
// block scanner and to the byte-at-a-time one, and fails on the first
// difference in what either reports or remembers.
func scanBoth(t *testing.T, data []byte, sizes []int) {
	t.Helper()
	if len(data) == 0 || data[0] != '{' && data[0] != '[' {
		return
	}
	var fast, slow containerScanner
	off := 0
	for k := 0; off < len(data); k++ {
		end := min(off+max(sizes[k%len(sizes)], 1), len(data))
		piece := data[off:end]
		n1, done1 := fast.feed(piece)
		n2, done2 := slow.feedBytewise(piece)
		got, want := fast, slow
		if done1 {
			// Where the value ended is all that matters then.
			got.inStr, want.inStr = false, false
		}
		if n1 != n2 || done1 != done2 || got != want {
			t.Fatalf("%q in pieces of %v: at %d blocks %d,%v %+v; bytewise %d,%v %+v",
				data, sizes, off, n1, done1, fast, n2, done2, slow)
		}
		if done1 {
			break
		}
		off = end
	}
}

// TestScannerMatchesBytewise checks the block scanner against the plain
// byte loop on tricky inputs, whole and cut at every size.
func TestScannerMatchesBytewise(t *testing.T) {
	inputs := []string{
		`{"a":"}{\"\\"}`,
		`{"a":"\\\\\\\"]"}`,
		`[1,[2,[3,[4,[5]]]],{"x":"]"}]`,
		`{"k:{\"name\":\"app\"}":{".":{},"f:x":{}},"y":[{"z":"\\"}]}`,
		`{"long":"` + string(bytes.Repeat([]byte("0123456789abcdef"), 20)) + `","b":{}}`,
		`{"esc":"` + string(bytes.Repeat([]byte(`\"x\\`), 30)) + `"}`,
		`{\"a":1}`,
		`{"a":"b"\`,
		`{"a":{"b":{"c":{"d":{}}}},"e":{"f":[]}}`,
		`{}}}}]]]`,
	}
	// Runs of backslashes, quotes and brackets across a block boundary.
	for pad := 50; pad < 70; pad++ {
		for n := 1; n <= 4; n++ {
			slashes := strings.Repeat(`\`, n)
			inputs = append(inputs,
				`{"a":"`+strings.Repeat("x", pad)+slashes+`"}"]}`+`,"b":[{}]}`,
				`[`+strings.Repeat(" ", pad)+`"`+slashes+`"`+strings.Repeat("]", n)+`]`,
				`{"a":{"b":{"c":`+strings.Repeat(" ", pad)+`{"d":"`+slashes+`}"}}}}}`)
		}
	}
	// Long strings, crossed by IndexByte, ending in runs of backslashes.
	for _, pad := range []int{63, 64, 65, 100, 127, 128, 129, 200, 300} {
		for n := range 5 {
			slashes := strings.Repeat(`\`, n)
			inputs = append(inputs,
				`{"a":"`+strings.Repeat("y", pad)+slashes+`"}]"`+strings.Repeat("z", pad)+`","b":{}}`,
				`[{"s":"`+strings.Repeat("[", pad)+slashes+`"},"`+strings.Repeat("}", pad)+`"]`)
		}
	}
	for _, fx := range fixtures.Names() {
		inputs = append(inputs, string(fixtures.Load(t, fx).Body))
	}
	for _, in := range inputs {
		for size := 1; size <= 40; size++ {
			scanBoth(t, []byte(in), []int{size})
		}
		for _, size := range []int{63, 64, 65, 127, 128, 129, 200, len(in)} {
			scanBoth(t, []byte(in), []int{size})
		}
		scanBoth(t, []byte(in), []int{7, 1, 9, 16, 3, 64, 8, 70})
	}
}

// FuzzScanner: the block scanner and the byte loop agree on any input
// cut anywhere.
func FuzzScanner(f *testing.F) {
	addFixtureSeeds(f)
	long := strings.Repeat("y", 100)
	f.Add([]byte(`{"a":"`+long+`\\\"`+long+`\\"}]`), uint16(70))
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		scanBoth(t, data, []int{len(data)})
		scanBoth(t, data, []int{int(cut)%(len(data)+1) + 1, int(cut>>8) + 1})
		classifyBoth(t, data)
	})
}

// classifyBoth checks classify (SSE2 on amd64) and classifyWords against a
// byte loop on every 64-byte window of data.
func classifyBoth(t *testing.T, data []byte) {
	t.Helper()
	for i := 0; i+64 <= len(data); i++ {
		p := (*[64]byte)(data[i:])
		var want [4]uint64
		for k, c := range p {
			switch c {
			case '"':
				want[0] |= 1 << k
			case '\\':
				want[1] |= 1 << k
			case '{', '[':
				want[2] |= 1 << k
			case '}', ']':
				want[3] |= 1 << k
			}
		}
		q, b, o, c := classify(p)
		require.Equal(t, want, [4]uint64{q, b, o, c}, "classify %q", p)
		q, b, o, c = classifyWords(p)
		require.Equal(t, want, [4]uint64{q, b, o, c}, "classifyWords %q", p)
		var wantJSON [7]uint64
		for k, c := range p {
			switch {
			case c == '"':
				wantJSON[0] |= 1 << k
			case c == '\\':
				wantJSON[1] |= 1 << k
			case c == '{' || c == '[':
				wantJSON[2] |= 1 << k
			case c == '}' || c == ']':
				wantJSON[3] |= 1 << k
			case c == ':' || c == ',':
				wantJSON[4] |= 1 << k
			case c == ' ':
				wantJSON[5] |= 1 << k
			case c < 0x20:
				wantJSON[6] |= 1 << k
			}
		}
		q, b, op, cl, sep, sp, ct, quoted := classifyJSON(p)
		require.Equal(t, wantJSON, [7]uint64{q, b, op, cl, sep, sp, ct}, "classifyJSON %q", p)
		require.Equal(t, prefixXOR(q), quoted, "classifyJSON's quoted %q", p)
		q, b, op, cl, sep, sp, ct = classifyJSONWords(p)
		require.Equal(t, wantJSON, [7]uint64{q, b, op, cl, sep, sp, ct}, "classifyJSONWords %q", p)
	}
}

func TestClassify(t *testing.T) {
	var all []byte
	for i := range 256 + 64 {
		all = append(all, byte(i), '"', byte(i*7), '{', byte(255-i), ']')
	}
	classifyBoth(t, all)
	for _, fx := range fixtures.Names() {
		classifyBoth(t, fixtures.Load(t, fx).Body)
	}
}

// TestValidNumber compares the number check with encoding/json on every
// string of up to five bytes from the characters numbers are made of, and
// on longer ones.
func TestValidNumber(t *testing.T) {
	const alphabet = "-+.eE019"
	var check func(prefix []byte, left int)
	check = func(prefix []byte, left int) {
		if got, want := validNumber(prefix), json.Valid(prefix) && len(prefix) > 0; got != want {
			t.Fatalf("validNumber(%q) = %v, encoding/json says %v", prefix, got, want)
		}
		if left == 0 {
			return
		}
		for i := range len(alphabet) {
			check(append(prefix, alphabet[i]), left-1)
		}
	}
	check(nil, 5)
	for _, s := range []string{"-0.5e+10", "123456789.123e-7", "1E400", "-", "01", "1.", ".5", "1e", "1e+", "--1", "0x1", "1_000", "12a"} {
		if got, want := validNumber([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("validNumber(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

// TestSkipString checks the eight-at-a-time string skipper against the
// rules: it stops at the closing quote, steps over escapes, rejects control
// characters, and reports truncation, wherever they fall in a word.
func TestSkipString(t *testing.T) {
	for pad := range 20 {
		x := strings.Repeat("é", pad/2) + strings.Repeat("x", pad%2)
		for _, tc := range []struct {
			in      string
			end     int // -1: an error
			escaped bool
		}{
			{`"` + x + `"tail`, len(x) + 2, false},
			{`"` + x + `\"` + x + `"`, 2*len(x) + 4, true},
			{`"` + x + `\\"`, len(x) + 4, true},
			{`"` + x + "\x1f\"", -1, false},
			{`"` + x + "\x7f\"", len(x) + 3, false},
			{`"` + x, -1, false},
			{`"` + x + `\`, -1, true},
		} {
			end, escaped, err := skipString([]byte(tc.in), 0)
			if tc.end < 0 {
				require.Error(t, err, "%q", tc.in)
				continue
			}
			require.NoError(t, err, "%q", tc.in)
			require.Equal(t, tc.end, end, "%q", tc.in)
			require.Equal(t, tc.escaped, escaped, "%q", tc.in)
		}
	}
}

// TestEscapes checks the carry-based escape masks against walking the
// backslashes one by one, on every 16-bit pattern at several places in the
// block and on random blocks dense with backslashes.
func TestEscapes(t *testing.T) {
	walk := func(bs, escIn uint64) (esc, out uint64) {
		esc = escIn
		for k := range 64 {
			if bs>>k&1 == 1 && esc>>k&1 == 0 {
				if k == 63 {
					out = 1
				} else {
					esc |= 1 << (k + 1)
				}
			}
		}
		return esc, out
	}
	check := func(bs, escIn uint64) {
		esc, out := escapes(bs, escIn)
		wantEsc, wantOut := walk(bs, escIn)
		esc, wantEsc = esc&^bs, wantEsc&^bs // only what is not a backslash counts
		if esc != wantEsc || out != wantOut {
			t.Fatalf("escapes(%064b, %d) = %064b, %d; want %064b, %d", bs, escIn, esc, out, wantEsc, wantOut)
		}
	}
	for p := range uint64(1 << 16) {
		for _, shift := range []int{0, 1, 24, 47, 48} {
			check(p<<shift, 0)
			check(p<<shift, 1)
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		bs := r.Uint64()&r.Uint64() | r.Uint64()&r.Uint64()&r.Uint64()<<1
		check(bs, r.Uint64()&1)
		check(^bs, 0)
	}
}
