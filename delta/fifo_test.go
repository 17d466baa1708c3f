package delta_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/testkit/parked"
	"github.com/listwatch/listwatch/testkit/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj is a small Named test object; v stands for its content.
type obj struct{ ns, name, v string }

func (o *obj) Namespace() string { return o.ns }
func (o *obj) Name() string      { return o.name }
func (o *obj) String() string    { return o.ns + "/" + o.name + "@" + o.v }

var key = store.MetaNamespaceKey[*obj]

func o(name, v string) *obj { return &obj{ns: "ns", name: name, v: v} }

// step is a delta written compactly for table tests: type, key, content;
// tomb marks a tombstone (content "" = zero object).
type step struct {
	typ  delta.DeltaType
	key  string
	v    string
	tomb bool
}

func steps(t *testing.T, ds delta.Deltas[*obj]) []step {
	t.Helper()
	out := make([]step, 0, len(ds))
	for _, d := range ds {
		k, err := d.Key(key)
		require.NoError(t, err)
		s := step{typ: d.Type, key: k, tomb: d.Tombstone != nil}
		if d.Object != nil {
			s.v = d.Object.v
		}
		if d.Tombstone != nil {
			assert.Equal(t, d.Object, d.Tombstone.Obj, "tombstone object and delta object agree")
		}
		out = append(out, s)
	}
	return out
}

// queued returns the FIFO's content in pop order without popping.
func queued(t *testing.T, f *delta.FIFO[*obj]) map[string][]step {
	t.Helper()
	out := map[string][]step{}
	for _, k := range f.ListKeys() {
		ds, ok := f.GetByKey(k)
		require.True(t, ok, k)
		out[k] = steps(t, ds)
	}
	return out
}

func pop(t *testing.T, f *delta.FIFO[*obj]) []step {
	t.Helper()
	ds, err := f.Pop(nil)
	require.NoError(t, err)
	return steps(t, ds)
}

// known is a KnownObjects whose lookups can fail.
type known struct {
	objs map[string]*obj
	err  map[string]error
}

func (k *known) ListKeys() []string {
	var out []string
	for key := range k.objs {
		out = append(out, key)
	}
	for key := range k.err {
		out = append(out, key)
	}
	slices.Sort(out)
	return out
}

func (k *known) GetByKey(key string) (*obj, bool, error) {
	if err := k.err[key]; err != nil {
		return nil, false, err
	}
	v, ok := k.objs[key]
	return v, ok, nil
}

func knownOf(objs ...*obj) *known {
	k := &known{objs: map[string]*obj{}}
	for _, x := range objs {
		k.objs[x.ns+"/"+x.name] = x
	}
	return k
}

// conformance 32. conformance 42 differs on purpose (decision 2): where
// RealFIFO queues every change as its own entry, these accumulate per key.
func TestDeltasAccumulatePerKey(t *testing.T) {
	f := delta.NewFIFO(key)
	require.NoError(t, f.Add(o("a", "1")))
	require.NoError(t, f.Add(o("b", "1")))
	require.NoError(t, f.Update(o("a", "2")))
	require.NoError(t, f.Delete(o("a", "3")))
	require.NoError(t, f.Add(o("a", "4")))
	require.NoError(t, f.Update(o("b", "2")))
	require.NoError(t, f.Add(o("c", "1")))

	assert.Equal(t, []string{"ns/a", "ns/b", "ns/c"}, f.ListKeys(), "each key once, by first arrival")
	assert.Equal(t, 3, f.Len())
	assert.Equal(t, []step{
		{delta.Added, "ns/a", "1", false},
		{delta.Updated, "ns/a", "2", false},
		{delta.Deleted, "ns/a", "3", false},
		{delta.Added, "ns/a", "4", false},
	}, pop(t, f), "all of a key's deltas, oldest first")
	assert.Equal(t, []step{{delta.Added, "ns/b", "1", false}, {delta.Updated, "ns/b", "2", false}}, pop(t, f))
	require.NoError(t, f.Update(o("a", "5")))
	assert.Equal(t, []string{"ns/c", "ns/a"}, f.ListKeys(), "a popped key queues anew at the back")
	assert.Equal(t, []step{{delta.Added, "ns/c", "1", false}}, pop(t, f))
	assert.Equal(t, []step{{delta.Updated, "ns/a", "5", false}}, pop(t, f))
	assert.Equal(t, 0, f.Len())
}

// conformance 33 (see also TestAppendDeduped)
func TestConsecutiveDeletesCollapse(t *testing.T) {
	f := delta.NewFIFO(key)
	f.KnownObjects = knownOf(o("a", "0"))
	require.NoError(t, f.Delete(o("a", "1")))
	require.NoError(t, f.Delete(o("a", "2")))
	require.NoError(t, f.Replace(nil, "9"), "a tombstone after a real delete is dropped")
	assert.Equal(t, map[string][]step{"ns/a": {{delta.Deleted, "ns/a", "1", false}}}, queued(t, f))

	g := delta.NewFIFO(key)
	g.KnownObjects = knownOf(o("a", "0"))
	require.NoError(t, g.Replace(nil, "9"))
	require.NoError(t, g.Delete(o("a", "1")))
	assert.Equal(t, map[string][]step{"ns/a": {{delta.Deleted, "ns/a", "1", false}}}, queued(t, g),
		"a real delete replaces a tombstone")
}

// conformance 34
func TestDeleteOfUnknownKeyIsDropped(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name  string
		known delta.KnownObjects[*obj]
		queue bool // an Add precedes the Delete
		want  bool // a Deleted delta is queued
	}{
		{name: "no known objects, not queued", want: false},
		{name: "no known objects, queued", queue: true, want: true},
		{name: "not known, not queued", known: knownOf(o("other", "1")), want: false},
		{name: "known only", known: knownOf(o("a", "1")), want: true},
		{name: "known and queued", known: knownOf(o("a", "1")), queue: true, want: true},
		{name: "lookup fails", known: &known{err: map[string]error{"ns/a": boom}}, want: true},
	} {
		f := delta.NewFIFO(key)
		if tc.known != nil {
			f.KnownObjects = tc.known
		}
		if tc.queue {
			require.NoError(t, f.Add(o("a", "0")))
		}
		require.NoError(t, f.Delete(o("a", "x")), tc.name)
		ds, _ := f.GetByKey("ns/a")
		assert.Equal(t, tc.want, len(ds) > 0 && ds.Newest().Type == delta.Deleted, tc.name)
		assert.True(t, f.HasSynced(), "%s: even a dropped delete populates", tc.name)
	}
}

// conformance 35, conformance 51; decision 2: a relist reaches the queue
// as one Replace (the cache has none of its own). conformance 43 and
// conformance 44 differ on purpose (decision 2): the Replace yields a
// Replaced delta per listed key, then the tombstones, not RealFIFO's
// tombstones first or its single ReplacedAll entry.
func TestReplace(t *testing.T) {
	boom := errors.New("boom")
	f := delta.NewFIFO(key)
	f.KnownObjects = &known{
		objs: map[string]*obj{"ns/k1": o("k1", "old"), "ns/k2": o("k2", "old"), "ns/q": o("q", "old"), "ns/b": o("b", "old")},
		err:  map[string]error{"ns/k3": boom},
	}
	require.NoError(t, f.Update(o("q", "new")))                            // queued, missing from list
	require.NoError(t, f.Add(o("b", "1")))                                 // queued and listed
	require.NoError(t, f.Add(o("gone", "1")))                              // queued only, then deleted
	require.NoError(t, f.Delete(o("gone", "2")))                           // newest is a real delete
	require.NoError(t, f.Replace([]*obj{o("a", "r"), o("b", "r")}, "100")) // k1, k2, k3 known only

	assert.Equal(t, map[string][]step{
		"ns/q":    {{delta.Updated, "ns/q", "new", false}, {delta.Deleted, "ns/q", "new", true}},
		"ns/b":    {{delta.Added, "ns/b", "1", false}, {delta.Replaced, "ns/b", "r", false}},
		"ns/gone": {{delta.Added, "ns/gone", "1", false}, {delta.Deleted, "ns/gone", "2", false}},
		"ns/a":    {{delta.Replaced, "ns/a", "r", false}},
		"ns/k1":   {{delta.Deleted, "ns/k1", "old", true}},
		"ns/k2":   {{delta.Deleted, "ns/k2", "old", true}},
		"ns/k3":   {{delta.Deleted, "ns/k3", "", true}},
	}, queued(t, f))
	keys := f.ListKeys()
	assert.Equal(t, []string{"ns/q", "ns/b", "ns/gone", "ns/a"}, keys[:4], "queued keys keep their place, listed ones follow")
	assert.ElementsMatch(t, []string{"ns/k1", "ns/k2", "ns/k3"}, keys[4:], "known-only tombstones come last")

	// A second relist tombstones a queued tombstone's key with the same
	// last known object, and the pair collapses to the newer one.
	require.NoError(t, f.Replace(nil, "101"))
	ds, _ := f.GetByKey("ns/k1")
	assert.Equal(t, []step{{delta.Deleted, "ns/k1", "old", true}}, steps(t, ds))
	ds, _ = f.GetByKey("ns/a")
	assert.Equal(t, []step{{delta.Replaced, "ns/a", "r", false}, {delta.Deleted, "ns/a", "r", true}}, steps(t, ds))

	// Old clients: Sync instead of Replaced.
	g := delta.NewFIFO(key)
	g.EmitDeltaTypeReplaced = false
	require.NoError(t, g.Replace([]*obj{o("a", "r")}, "1"))
	assert.Equal(t, []step{{delta.Sync, "ns/a", "r", false}}, pop(t, g))
}

func TestReplaceIsAtomicOnError(t *testing.T) {
	f := delta.NewFIFO(key)
	f.KnownObjects = knownOf(o("k", "1"))
	err := f.Replace([]*obj{o("a", "1"), {ns: "ns"}}, "1")
	require.ErrorIs(t, err, store.ErrNoName)
	assert.Equal(t, 0, f.Len())
	assert.False(t, f.HasSynced())
}

// conformance 36. conformance 46 differs on purpose (decision 2): a
// resync queues a Sync delta per known key, not one SyncAll entry.
func TestResync(t *testing.T) {
	boom := errors.New("boom")
	f := delta.NewFIFO(key)
	require.NoError(t, f.Resync(), "no known objects: nothing to do")
	assert.Equal(t, 0, f.Len())

	f.KnownObjects = &known{
		objs: map[string]*obj{"ns/a": o("a", "1"), "ns/b": o("b", "1"), "ns/c": o("c", "1")},
		err:  map[string]error{"ns/bad": boom},
	}
	require.NoError(t, f.Update(o("b", "2")))
	err := f.Resync()
	require.ErrorIs(t, err, boom)
	assert.Contains(t, err.Error(), `"ns/bad"`)
	assert.Equal(t, map[string][]step{
		"ns/a": {{delta.Sync, "ns/a", "1", false}},
		"ns/b": {{delta.Updated, "ns/b", "2", false}},
		"ns/c": {{delta.Sync, "ns/c", "1", false}},
	}, queued(t, f), "queued keys get no Sync: the known object may be stale")
	require.Error(t, f.Resync())
	assert.Equal(t, 3, f.Len(), "a second resync adds nothing while all are queued")
}

// conformance 38
func TestHasSynced(t *testing.T) {
	t.Run("first Replace", func(t *testing.T) {
		f := delta.NewFIFO(key)
		f.KnownObjects = knownOf(o("stale", "1"))
		assert.False(t, f.HasSynced(), "nothing written yet")
		require.NoError(t, f.Replace([]*obj{o("a", "1"), o("b", "1")}, "1"))
		require.NoError(t, f.Add(o("c", "1")), "later events are not part of the initial population")
		for i := range 3 { // a, b and the tombstone for stale
			assert.False(t, f.HasSynced(), i)
			assertOpen(t, f.Done())
			_, err := f.Pop(nil)
			require.NoError(t, err)
		}
		assert.True(t, f.HasSynced())
		assertClosed(t, f.Done())
		require.NoError(t, f.Replace(nil, "2"))
		assert.True(t, f.HasSynced(), "only the first Replace counts")
	})
	t.Run("first Add", func(t *testing.T) {
		f := delta.NewFIFO(key)
		require.NoError(t, f.Add(o("a", "1")))
		assert.True(t, f.HasSynced())
		assertClosed(t, f.Done())
	})
	t.Run("empty Replace", func(t *testing.T) {
		f := delta.NewFIFO(key)
		require.NoError(t, f.Replace(nil, "1"))
		assert.True(t, f.HasSynced())
		assertClosed(t, f.Done())
	})
	t.Run("requeue does not count", func(t *testing.T) {
		f := delta.NewFIFO(key)
		require.NoError(t, f.Replace([]*obj{o("a", "1")}, "1"))
		_, err := f.Pop(func(delta.Deltas[*obj], bool) error { return delta.ErrRequeue })
		require.ErrorIs(t, err, delta.ErrRequeue)
		assert.False(t, f.HasSynced())
		_, err = f.Pop(nil)
		require.NoError(t, err)
		assert.True(t, f.HasSynced())
	})
}

func assertOpen(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
		t.Fatal("Done closed early")
	default:
	}
}

func assertClosed(t *testing.T, c <-chan struct{}) {
	t.Helper()
	select {
	case <-c:
	default:
		t.Fatal("Done not closed")
	}
}

// conformance 39
func TestPopInitialListFlag(t *testing.T) {
	f := delta.NewFIFO(key)
	require.NoError(t, f.Replace([]*obj{o("a", "1"), o("b", "1")}, "1"))
	require.NoError(t, f.Add(o("c", "1")))
	var flags []bool
	for range 3 {
		_, err := f.Pop(func(_ delta.Deltas[*obj], initial bool) error {
			flags = append(flags, initial)
			return nil
		})
		require.NoError(t, err)
	}
	assert.Equal(t, []bool{true, true, false}, flags)
}

// conformance 39
func TestPopBlocksUntilAddOrClose(t *testing.T) {
	f := delta.NewFIFO(key)
	got := make(chan []step)
	go func() {
		ds, err := f.Pop(nil)
		assert.NoError(t, err)
		got <- steps(t, ds)
	}()
	require.NoError(t, f.Add(o("a", "1")))
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}}, testwait.Recv(t, got, "a blocked Pop to wake on Add"))

	errc := make(chan error)
	go func() {
		_, err := f.Pop(nil)
		errc <- err
	}()
	// Close only once Pop waits, so that it is Close that must wake it.
	require.Eventually(t, func() bool { return parked.In("delta.(*FIFO[...]).Pop(", "sync.Cond.Wait") }, testwait.Timeout, time.Millisecond,
		"Pop did not wait on an empty queue")
	f.Close()
	require.ErrorIs(t, testwait.Recv(t, errc, "a blocked Pop to wake on Close"), delta.ErrClosed)
	assert.True(t, f.IsClosed())
}

// conformance 39
func TestCloseDrainsFirst(t *testing.T) {
	f := delta.NewFIFO(key)
	require.NoError(t, f.Add(o("a", "1")))
	assert.False(t, f.IsClosed())
	f.Close()
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}}, pop(t, f))
	_, err := f.Pop(nil)
	require.ErrorIs(t, err, delta.ErrClosed)
	_, err = f.Pop(nil)
	require.ErrorIs(t, err, delta.ErrClosed, "closed stays closed")
}

// conformance 40 (decision 3): upstream requeue was dropped; ours merges the
// returned deltas in front of anything that arrived meanwhile.
func TestRequeue(t *testing.T) {
	f := delta.NewFIFO(key)
	require.NoError(t, f.Add(o("a", "1")))
	require.NoError(t, f.Add(o("b", "1")))
	cause := errors.New("handler failed")
	ds, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error {
		require.NoError(t, f.Update(o("a", "2")), "producers run while process does")
		return fmt.Errorf("%w: %w", cause, delta.ErrRequeue)
	})
	require.ErrorIs(t, err, cause)
	require.ErrorIs(t, err, delta.ErrRequeue)
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}}, steps(t, ds))
	assert.Equal(t, []string{"ns/b", "ns/a"}, f.ListKeys())
	ds, _ = f.GetByKey("ns/a")
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}, {delta.Updated, "ns/a", "2", false}}, steps(t, ds))

	// Requeue of a key queued again keeps its place.
	_, err = f.Pop(func(delta.Deltas[*obj], bool) error {
		require.NoError(t, f.Update(o("b", "2")))
		require.NoError(t, f.Update(o("c", "1")))
		return delta.ErrRequeue
	})
	require.ErrorIs(t, err, delta.ErrRequeue)
	assert.Equal(t, []string{"ns/a", "ns/b", "ns/c"}, f.ListKeys())

	// A plain error drops the deltas, as upstream.
	_, err = f.Pop(func(delta.Deltas[*obj], bool) error { return cause })
	require.ErrorIs(t, err, cause)
	assert.Equal(t, []string{"ns/b", "ns/c"}, f.ListKeys())

	// Merging dedups across the seam: a tombstone from a racing Replace
	// after a requeued real delete collapses into the delete.
	g := delta.NewFIFO(key)
	g.KnownObjects = knownOf(o("x", "0"))
	require.NoError(t, g.Delete(o("x", "1")))
	_, err = g.Pop(func(delta.Deltas[*obj], bool) error {
		require.NoError(t, g.Delete(o("x", "2")))
		return delta.ErrRequeue
	})
	require.ErrorIs(t, err, delta.ErrRequeue)
	ds, _ = g.GetByKey("ns/x")
	assert.Equal(t, []step{{delta.Deleted, "ns/x", "1", false}}, steps(t, ds))
}

func TestProcessPanicReleasesFIFO(t *testing.T) {
	f := delta.NewFIFO(key)
	f.KnownObjects = knownOf()
	require.NoError(t, f.Add(o("a", "1")))
	assert.Panics(t, func() {
		_, _ = f.Pop(func(delta.Deltas[*obj], bool) error { panic("handler bug") })
	})
	require.NoError(t, f.Add(o("b", "1")))
	assert.Equal(t, []step{{delta.Added, "ns/b", "1", false}}, pop(t, f), "the next Pop is not stuck")
	require.NoError(t, f.Replace(nil, "1"))
	assert.Equal(t, 0, f.Len(), "the panicked key is no longer in flight")
}

// conformance 41: keys of deltas come from the newest object.
// conformance 49: a tombstone is keyed by its Key, with or without an object.
func TestKeys(t *testing.T) {
	f := delta.NewFIFO(key)
	f.KnownObjects = &known{err: map[string]error{"ns/lost": errors.New("x")}}
	require.NoError(t, f.Replace(nil, "1"))
	ds, _ := f.GetByKey("ns/lost")
	require.Len(t, ds, 1)
	require.NotNil(t, ds[0].Tombstone)
	assert.Nil(t, ds[0].Object, "no last known state")
	k, err := ds[0].Key(key)
	require.NoError(t, err)
	assert.Equal(t, "ns/lost", k, "a tombstone's key needs no object")
	k, err = ds.Key(key)
	require.NoError(t, err)
	assert.Equal(t, "ns/lost", k)

	mixed := delta.Deltas[*obj]{{Type: delta.Added, Object: o("a", "1")}, {Type: delta.Updated, Object: &obj{name: "b"}}}
	k, err = mixed.Key(key)
	require.NoError(t, err)
	assert.Equal(t, "b", k, "Deltas use the newest object")
	assert.Equal(t, "1", mixed.Oldest().Object.v)
	assert.Equal(t, "b", mixed.Newest().Object.name)

	var none delta.Deltas[*obj]
	assert.Nil(t, none.Oldest())
	assert.Nil(t, none.Newest())
	_, err = none.Key(key)
	require.ErrorIs(t, err, delta.ErrNoDeltas)
}

func TestGet(t *testing.T) {
	f := delta.NewFIFO(key)
	require.NoError(t, f.Add(o("a", "1")))
	ds, ok, err := f.Get(o("a", ""))
	require.NoError(t, err)
	require.True(t, ok)
	ds[0].Type = delta.Sync
	again, _ := f.GetByKey("ns/a")
	assert.Equal(t, delta.Added, again[0].Type, "Get returns a copy")
	_, ok, err = f.Get(o("zz", ""))
	require.NoError(t, err)
	assert.False(t, ok)
	_, _, err = f.Get(&obj{})
	require.ErrorIs(t, err, store.ErrNoName)
}

func TestKeyErrors(t *testing.T) {
	f := delta.NewFIFO(key)
	bad := &obj{ns: "x"}
	for name, err := range map[string]error{
		"add": f.Add(bad), "update": f.Update(bad), "delete": f.Delete(bad), "replace": f.Replace([]*obj{bad}, "1"),
	} {
		require.ErrorIs(t, err, store.ErrNoName, name)
		assert.Contains(t, err.Error(), name)
	}
	assert.Equal(t, 0, f.Len())
	var nilKey store.KeyFunc[*obj]
	require.ErrorIs(t, delta.NewFIFO(nilKey).Add(o("a", "1")), store.ErrNoKeyFunc)
}

// apply is what an informer does with popped deltas: Deleted removes the
// key, everything else is the current state.
func apply(c *indexer.Cache[*obj], ds delta.Deltas[*obj]) error {
	for _, d := range ds {
		if d.Type != delta.Deleted {
			if err := c.Update(d.Object); err != nil {
				return err
			}
			continue
		}
		k, err := d.Key(key)
		if err != nil {
			return err
		}
		// A tombstone's object may be zero or stale: delete what is stored.
		if cur, ok, _ := c.GetByKey(k); ok {
			if err := c.Delete(cur); err != nil {
				return err
			}
		}
	}
	return nil
}
