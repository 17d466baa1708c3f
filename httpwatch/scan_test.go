package httpwatch

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// feedBytewise is feed done one byte at a time: the reference the block
// scanner must match.
func (s *containerScanner) feedBytewise(b []byte) (int, bool) {
	i := 0
	if s.esc && len(b) > 0 {
		s.esc, i = false, 1
	}
	n, done := s.bytewise(b, i)
	s.fed += n
	return n, done
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
		if done1 {
			// Where the value ended and its last child are all that
			// matters then; the rest is reset before the next value.
			fast.inStr, slow.inStr = false, false
		}
		if n1 != n2 || done1 != done2 || fast != slow {
			t.Fatalf("%q in pieces of %v: at %d blocks %d,%v %+v; bytewise %d,%v %+v",
				data, sizes, off, n1, done1, fast, n2, done2, slow)
		}
		if done1 {
			return
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
	for _, fx := range fixtureNames(t) {
		inputs = append(inputs, string(loadFixture(t, fx).Body))
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
	}
}

func TestClassify(t *testing.T) {
	var all []byte
	for i := range 256 + 64 {
		all = append(all, byte(i), '"', byte(i*7), '{', byte(255-i), ']')
	}
	classifyBoth(t, all)
	for _, fx := range fixtureNames(t) {
		classifyBoth(t, loadFixture(t, fx).Body)
	}
}
