package delta

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// conformance 33: only two Deleted deltas in a row collapse; the real
// deletion wins over a tombstone, else the newer one is kept.
func TestAppendDeduped(t *testing.T) {
	del := func(v string) Delta[string] { return Delta[string]{Type: Deleted, Object: v} }
	tomb := func(v string) Delta[string] { return tombstone("k", v) }
	of := func(typ DeltaType, v string) Delta[string] { return Delta[string]{Type: typ, Object: v} }
	for _, tc := range []struct {
		name string
		have Deltas[string]
		next Delta[string]
		want Deltas[string]
	}{
		{"first", nil, del("a"), Deltas[string]{del("a")}},
		{"delete after delete keeps the older", Deltas[string]{del("a")}, del("b"), Deltas[string]{del("a")}},
		{"tombstone after delete keeps the delete", Deltas[string]{del("a")}, tomb("b"), Deltas[string]{del("a")}},
		{"delete after tombstone keeps the delete", Deltas[string]{tomb("a")}, del("b"), Deltas[string]{del("b")}},
		{"tombstone after tombstone keeps the newer", Deltas[string]{tomb("a")}, tomb("b"), Deltas[string]{tomb("b")}},
		{"update then delete", Deltas[string]{of(Updated, "a")}, del("b"), Deltas[string]{of(Updated, "a"), del("b")}},
		{"delete then add", Deltas[string]{del("a")}, of(Added, "b"), Deltas[string]{del("a"), of(Added, "b")}},
		{"same updates are not merged", Deltas[string]{of(Updated, "a")}, of(Updated, "a"), Deltas[string]{of(Updated, "a"), of(Updated, "a")}},
		{"same syncs are not merged", Deltas[string]{of(Sync, "a")}, of(Sync, "a"), Deltas[string]{of(Sync, "a"), of(Sync, "a")}},
		{"only the last pair counts", Deltas[string]{del("a"), of(Added, "b")}, del("c"), Deltas[string]{del("a"), of(Added, "b"), del("c")}},
	} {
		assert.Equal(t, tc.want, appendDeduped(tc.have, tc.next), tc.name)
	}
}

func TestDeltaTypeString(t *testing.T) {
	for typ, want := range map[DeltaType]string{
		Added: "Added", Updated: "Updated", Deleted: "Deleted", Replaced: "Replaced", Sync: "Sync",
		0: "DeltaType(0)", 9: "DeltaType(9)",
	} {
		assert.Equal(t, want, typ.String())
	}
}

func TestKeyQueue(t *testing.T) {
	var q keyQueue
	next := 0
	want := 0
	// Push and pop across the compaction and release thresholds and check
	// strict FIFO order throughout.
	for round, n := range []int{3, 5000, 1, 2500, 0} {
		for range n {
			q.push(string(rune('A' + next%50)))
			next++
		}
		for q.len() > round%2 {
			assert.Equal(t, string(rune('A'+want%50)), q.pop())
			want++
		}
		assert.Equal(t, next-want, len(q.list()))
	}
	for q.len() > 0 {
		assert.Equal(t, string(rune('A'+want%50)), q.pop())
		want++
	}
	assert.Equal(t, next, want)
	assert.Nil(t, q.keys, "a big emptied queue lets its array go")
}
