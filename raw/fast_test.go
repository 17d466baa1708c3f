package raw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

// scanOutcome is everything a scan leaves that a caller reads: where it
// stopped, the error and where, the object's extent and the spans noted.
type scanOutcome struct {
	consumed int
	done     bool
	err      string
	errAt    int
	child    valueRange
	spans    knownSpans
}

// scanWith scans data, fed in pieces of sizes (a piece handed back is fed
// again with more), with the fast path on or off, noting spans at level.
func scanWith(data []byte, sizes []int, level int, fast bool) scanOutcome {
	defer func(was bool) { fastBlocks = was }(fastBlocks)
	fastBlocks = fast
	s := frameScanner{spans: &spanNotes{level: level}}
	s.reset()
	off, held := 0, 0
	for k := 0; ; k++ {
		end := min(off+held+max(sizes[k%len(sizes)], 1), len(data))
		n, done := s.feed(data[off:end])
		off += n
		held = end - off
		if done || end == len(data) {
			out := scanOutcome{consumed: off, done: done, errAt: s.errAt, child: s.child, spans: s.spans.noted()}
			if s.err != nil {
				out.err = s.err.Error()
			}
			return out
		}
	}
}

// requireSameScan: the fast path and tokens alone agree on data in
// whole and cut into pieces, at both levels the stream notes, and both
// agree with encoding/json.Valid.
func requireSameScan(t *testing.T, data []byte, cut int) {
	t.Helper()
	want := json.Valid(data)
	for _, sizes := range [][]int{{len(data)}, {cut%(len(data)+1) + 1, 64}, {97}} {
		for _, level := range []int{2, 3} {
			fast, slow := scanWith(data, sizes, level, true), scanWith(data, sizes, level, false)
			if fmt.Sprint(fast) != fmt.Sprint(slow) {
				t.Fatalf("pieces %v, level %d, fast path %+v, tokens %+v, on %q", sizes, level, fast, slow, data)
			}
			got := fast.done && fast.err == "" && len(bytes.TrimLeft(data[fast.consumed:], " \t\r\n")) == 0
			if got != want {
				t.Fatalf("pieces %v: scanner %v, json.Valid %v on %q", sizes, got, want, data)
			}
		}
	}
}

// compactObjects are the fixtures' objects and lists as the API server
// writes them, compact, where the fast path takes most blocks.
func compactObjects(t testing.TB) [][]byte {
	var out [][]byte
	for _, name := range fixtures.Names() {
		for _, line := range bytes.Split(fixtures.Load(t, name).Body, []byte("\n")) {
			var buf bytes.Buffer
			if json.Compact(&buf, line) == nil && buf.Len() > 0 && (buf.Bytes()[0] == '{' || buf.Bytes()[0] == '[') {
				out = append(out, buf.Bytes())
			}
		}
	}
	return out
}

// TestFastPathMatchesTokens: on compact objects, and on every one-byte
// change and deletion of them near the blocks' edges, the fast path
// leaves what the token walk leaves: the same verdict, error and offset,
// object extent and spans.
func TestFastPathMatchesTokens(t *testing.T) {
	objects := compactObjects(t)
	require.NotEmpty(t, objects)
	for _, obj := range objects {
		requireSameScan(t, obj, len(obj)/2)
		for at := 0; at < len(obj); at++ {
			if at%64 > 2 && at%64 < 61 && at%7 != 0 {
				continue // every seventh byte, and all near a block's edge
			}
			for _, c := range []byte(`{}[]:,"\1a- ` + "\n") {
				mutated := bytes.Clone(obj)
				mutated[at] = c
				requireSameScan(t, mutated, at)
			}
			requireSameScan(t, append(bytes.Clone(obj[:at]), obj[at+1:]...), at)
		}
	}
}

// FuzzFastPath: the fast path and the token walk agree on any input, and
// with encoding/json.Valid. Seeds are compact, so that mutations keep
// most blocks on the fast path.
func FuzzFastPath(f *testing.F) {
	for _, obj := range compactObjects(f) {
		f.Add(obj, uint16(len(obj)/3))
	}
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		if len(data) == 0 || data[0] != '{' && data[0] != '[' {
			return
		}
		requireSameScan(t, data, int(cut))
	})
}
