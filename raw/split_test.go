package raw

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/stretchr/testify/require"
)

// decodeAll reads every event from a body given as chunks, recording each
// event's description and raw object.
func decodeAll(t testing.TB, chunks [][]byte) []string {
	t.Helper()
	w := newTestWatcher(&chunkReader{chunks: chunks}, &Decoder{})
	var out []string
	for {
		ev, err := w.Next()
		if err == io.EOF {
			return out
		}
		require.NoError(t, err)
		line := string(ev.Type)
		if o := ev.Object; o != nil {
			line += " " + o.Namespace() + "/" + o.Name() + " " + o.ResourceVersion() + " " + o.UID() + " " + o.String()
		}
		out = append(out, line)
	}
}

func scanAll(t testing.TB, chunks [][]byte) string {
	t.Helper()
	p, err := (&Decoder{}).DecodeList(&chunkReader{chunks: chunks}, 0)
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(p.ResourceVersion + " " + p.Continue + "\n")
	for _, o := range p.Items {
		b.WriteString(o.Namespace() + "/" + o.Name() + " " + o.ResourceVersion() + " " + o.UID() + " " + o.String() + "\n")
	}
	return b.String()
}

func fixturesWhere(t *testing.T, keep func(fixtures.Response) bool) []fixtures.Response {
	var out []fixtures.Response
	for _, n := range fixtures.Names() {
		if fx := fixtures.Load(t, n); keep(fx) {
			out = append(out, fx)
		}
	}
	return out
}

func watchFixtures(t *testing.T) []fixtures.Response {
	return fixturesWhere(t, func(fx fixtures.Response) bool { return fx.Status == 200 && fx.IsWatch() })
}

func listFixtures(t *testing.T) []fixtures.Response {
	return fixturesWhere(t, func(fx fixtures.Response) bool { return fx.Status == 200 && !fx.IsWatch() })
}

// randomChunks cuts b at a random number of random offsets.
func randomChunks(r *rand.Rand, b []byte) [][]byte {
	n := r.IntN(20) + 1
	offs := make([]int, n)
	for i := range offs {
		offs[i] = r.IntN(len(b) + 1)
	}
	sort.Ints(offs)
	return splitAt(b, offs...)
}

// The framer must not depend on how the body was chunked: every fixture
// split in two at every byte, and in random pieces, gives the same events.
func TestWatchSplitAtEveryByte(t *testing.T) {
	for _, fx := range watchFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			t.Parallel()
			want := decodeAll(t, [][]byte{fx.Body})
			require.NotEmpty(t, want)
			for i := 0; i <= len(fx.Body); i++ {
				if got := decodeAll(t, splitAt(fx.Body, i)); !equalLines(got, want) {
					t.Fatalf("split at byte %d: events differ:\n%s\nwant:\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
			r := rand.New(rand.NewPCG(1, 2))
			for range 100 {
				chunks := randomChunks(r, fx.Body)
				require.Equal(t, want, decodeAll(t, chunks))
			}
			// One byte per read is the worst case for resuming a scan.
			var bytewise [][]byte
			for i := range fx.Body {
				bytewise = append(bytewise, fx.Body[i:i+1])
			}
			require.Equal(t, want, decodeAll(t, bytewise))
		})
	}
}

func equalLines(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Several frames in one read, without newlines between them, and with
// blank space of every JSON kind.
func TestWatchFramesWithoutNewlines(t *testing.T) {
	fx := fixtures.Load(t, "watch-from-rv.jsonl")
	want := decodeAll(t, [][]byte{fx.Body})
	lines := bytes.Split(bytes.TrimSpace(fx.Body), []byte("\n"))
	require.Equal(t, want, decodeAll(t, [][]byte{bytes.Join(lines, nil)}))
	require.Equal(t, want, decodeAll(t, [][]byte{bytes.Join(lines, []byte(" \t\r\n "))}))
}

// Each watch object is, byte for byte, what encoding/json finds in the
// frame.
func TestWatchObjectsMatchReferenceDecoder(t *testing.T) {
	for _, fx := range watchFixtures(t) {
		dec := json.NewDecoder(bytes.NewReader(fx.Body))
		w := newTestWatcher(bytes.NewReader(fx.Body), &Decoder{})
		for {
			var ref struct {
				Type   string
				Object json.RawMessage
			}
			err := dec.Decode(&ref)
			ev, nerr := w.Next()
			if err == io.EOF {
				require.Equal(t, io.EOF, nerr, fx.Name)
				break
			}
			require.NoError(t, err)
			require.NoError(t, nerr)
			require.Equal(t, ref.Type, string(ev.Type), fx.Name)
			if ev.Object != nil {
				require.Equal(t, string(ref.Object), ev.Object.String(), fx.Name)
			}
		}
	}
}

func TestListSplitAtEveryByte(t *testing.T) {
	for _, fx := range listFixtures(t) {
		t.Run(fx.Name, func(t *testing.T) {
			t.Parallel()
			want := scanAll(t, [][]byte{fx.Body})
			for i := 0; i <= len(fx.Body); i++ {
				if got := scanAll(t, splitAt(fx.Body, i)); got != want {
					t.Fatalf("split at byte %d: page differs:\n%s\nwant:\n%s", i, got, want)
				}
			}
			r := rand.New(rand.NewPCG(3, 4))
			for range 100 {
				require.Equal(t, want, scanAll(t, randomChunks(r, fx.Body)))
			}
		})
	}
}

// List items are the server's bytes; the scanner only inserts kind and
// apiVersion into items of built-in lists, which lack them.
func TestListItemsMatchReferenceDecoder(t *testing.T) {
	for _, fx := range listFixtures(t) {
		var ref struct {
			Kind, APIVersion string
			Items            []json.RawMessage
		}
		require.NoError(t, json.Unmarshal(fx.Body, &ref))
		p, err := (&Decoder{}).DecodeList(bytes.NewReader(fx.Body), 0)
		require.NoError(t, err)
		require.Len(t, p.Items, len(ref.Items), fx.Name)
		for i, item := range ref.Items {
			want := string(item)
			if !strings.Contains(want, `"kind":`) {
				want = `{"kind":"` + strings.TrimSuffix(ref.Kind, "List") + `","apiVersion":"` + ref.APIVersion + `",` + want[1:]
			}
			require.Equal(t, want, p.Items[i].String(), fx.Name)
			require.True(t, json.Valid(p.Items[i].Raw()))
		}
	}
}
