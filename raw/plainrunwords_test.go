package raw

import (
	"bytes"
	"testing"
)

// TestPlainRunWordsCountsWholeWords: the portable plainRun, which crosses
// long strings off amd64, counts exactly the bytes before the first quote,
// backslash or control byte, or, with none in p's whole 8-byte words,
// all of those words: no word it could take is left to the slower block
// path, the last one included. (TestPlainRun allows the SSE2 version its
// 16-byte chunks.)
func TestPlainRunWordsCountsWholeWords(t *testing.T) {
	for n := range 41 {
		words := n &^ 7
		for _, c := range []byte{'"', '\\', 0, '\n', 0x1f} {
			for at := 0; at <= n; at++ {
				p := bytes.Repeat([]byte("a\xff \x7f"), n)[:n]
				want := words
				if at < n {
					p[at] = c
					want = min(at, words)
				}
				if got := plainRunWords(p); got != want {
					t.Fatalf("plainRunWords(%q) = %d, want %d", p, got, want)
				}
			}
		}
	}
}
