package indexer_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/testkit/testwait"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj is a small Named, Labeled and Owned test object.
type obj struct {
	ns, name string
	labels   map[string]string
	owners   []string
}

func (o *obj) Namespace() string   { return o.ns }
func (o *obj) Name() string        { return o.name }
func (o *obj) OwnerUIDs() []string { return o.owners }
func (o *obj) Label(k string) (string, bool) {
	v, ok := o.labels[k]
	return v, ok
}

var key = store.MetaNamespaceKey[*obj]

const byApp = "app"

func newCache() *indexer.Cache[*obj] {
	return indexer.New(key, indexer.Indexers[*obj]{
		indexer.Namespace: indexer.NamespaceIndex[*obj],
		byApp:             indexer.LabelIndex[*obj]("app"),
		indexer.Owner:     indexer.OwnerIndex[*obj],
	})
}

func pod(ns, name, app string, owners ...string) *obj {
	o := &obj{ns: ns, name: name, owners: owners}
	if app != "" {
		o.labels = map[string]string{"app": app}
	}
	return o
}

func keys(t *testing.T, c *indexer.Cache[*obj], name, value string) []string {
	t.Helper()
	ks, err := c.IndexKeys(name, value)
	require.NoError(t, err)
	slices.Sort(ks)
	return ks
}

func values(t *testing.T, c *indexer.Cache[*obj], name string) []string {
	t.Helper()
	vs, err := c.ListIndexFuncValues(name)
	require.NoError(t, err)
	slices.Sort(vs)
	return vs
}

func names(objs []*obj) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.name)
	}
	slices.Sort(out)
	return out
}

// conformance 50, conformance 51: an upsert moves its index entries, one key at a time,
// which is also how a relist reaches the cache (it has no Replace).
func TestUpsertMovesIndexEntries(t *testing.T) {
	c := newCache()
	require.NoError(t, c.Add(pod("a", "p", "web", "rs1")))
	require.NoError(t, c.Add(pod("a", "p", "db", "rs1", "rs2")), "Add of an existing key is an update")
	assert.Empty(t, keys(t, c, byApp, "web"), "old value's entry is gone")
	assert.Equal(t, []string{"a/p"}, keys(t, c, byApp, "db"))
	assert.Equal(t, []string{"a/p"}, keys(t, c, indexer.Owner, "rs2"))

	require.NoError(t, c.Update(pod("a", "p", "", "rs2")))
	assert.Equal(t, []string{"rs2"}, values(t, c, indexer.Owner))
	assert.Empty(t, values(t, c, byApp), "no label, no entry")
	require.NoError(t, c.Update(pod("a", "q", "web")), "Update of a new key is an add")
	assert.Equal(t, []string{"a/p", "a/q"}, keys(t, c, indexer.Namespace, "a"))

	require.NoError(t, c.Delete(pod("a", "p", "")))
	require.NoError(t, c.Delete(pod("a", "p", "")), "deleting a missing key is a no-op")
	require.NoError(t, c.Delete(pod("zz", "never", "")))
	assert.Equal(t, []string{"a/q"}, c.ListKeys())
	assert.Equal(t, []string{"a/q"}, keys(t, c, indexer.Namespace, "a"))
	assertIndicesFresh(t, c)
}

// conformance 52
func TestEmptySetsAreDeleted(t *testing.T) {
	c := newCache()
	for i := range 3 {
		require.NoError(t, c.Add(pod("ns", fmt.Sprint(i), "web", "rs")))
	}
	for i := range 3 {
		require.NoError(t, c.Update(pod("ns", fmt.Sprint(i), "api", "rs2")))
	}
	assert.Equal(t, []string{"api"}, values(t, c, byApp), "value web left with its last object")
	assert.Equal(t, []string{"rs2"}, values(t, c, indexer.Owner))
	for i := range 3 {
		require.NoError(t, c.Delete(pod("ns", fmt.Sprint(i), "")))
	}
	for _, name := range []string{indexer.Namespace, byApp, indexer.Owner} {
		assert.Empty(t, values(t, c, name), name)
	}
	got, err := c.ByIndex(byApp, "api")
	require.NoError(t, err)
	assert.NotNil(t, got)
	assert.Empty(t, got)
}

// conformance 53
func TestUnknownIndex(t *testing.T) {
	c := newCache()
	require.NoError(t, c.Add(pod("a", "p", "web")))
	_, err1 := c.ByIndex("nope", "x")
	_, err2 := c.IndexKeys("nope", "x")
	_, err3 := c.Index("nope", pod("a", "p", ""))
	_, err4 := c.ListIndexFuncValues("nope")
	for i, err := range []error{err1, err2, err3, err4} {
		require.ErrorIs(t, err, indexer.ErrUnknownIndex, i)
		assert.Contains(t, err.Error(), `"nope"`, i)
	}
}

// conformance 54, decision 12: upstream panics on an IndexFunc error; we return it from
// the write and leave items and indices as they were.
func TestIndexFuncErrorChangesNothing(t *testing.T) {
	boom := errors.New("boom")
	fail := func(o *obj) ([]string, error) {
		if o.labels["fail"] != "" {
			return nil, boom
		}
		return []string{o.name}, nil
	}
	c := indexer.New(key, indexer.Indexers[*obj]{"byName": fail, indexer.Namespace: indexer.NamespaceIndex[*obj]})
	good := pod("a", "p", "web")
	bad := &obj{ns: "b", name: "p", labels: map[string]string{"fail": "y"}}
	badSameKey := &obj{ns: "a", name: "p", labels: map[string]string{"fail": "y"}}
	require.NoError(t, c.Add(good))

	for name, err := range map[string]error{
		"add":    c.Add(bad),
		"update": c.Update(badSameKey),
	} {
		require.ErrorIs(t, err, boom, name)
		assert.Contains(t, err.Error(), `"byName"`, name)
	}
	got, ok, _ := c.GetByKey("a/p")
	require.True(t, ok)
	assert.Same(t, good, got)
	assert.Equal(t, []string{"a/p"}, c.ListKeys())
	assert.Equal(t, []string{"a"}, values(t, c, indexer.Namespace))
	assert.Equal(t, []string{"p"}, values(t, c, "byName"))

	// An index function failing on a stored object blocks AddIndexers.
	err := c.AddIndexers(indexer.Indexers[*obj]{"x": indexer.NamespaceIndex[*obj], "y": func(*obj) ([]string, error) { return nil, boom }})
	require.ErrorIs(t, err, boom)
	assert.Len(t, c.GetIndexers(), 2, "neither index was added")
}

// conformance 55
func TestAddIndexers(t *testing.T) {
	c := indexer.New(key, nil)
	require.NoError(t, c.Add(pod("a", "p", "web", "u1")))
	require.NoError(t, c.Add(pod("b", "q", "web", "u1", "u2")))
	require.NoError(t, c.AddIndexers(indexer.Indexers[*obj]{
		byApp:         indexer.LabelIndex[*obj]("app"),
		indexer.Owner: indexer.OwnerIndex[*obj],
	}))
	assert.Equal(t, []string{"a/p", "b/q"}, keys(t, c, byApp, "web"), "existing items are indexed")
	assert.Equal(t, []string{"b/q"}, keys(t, c, indexer.Owner, "u2"))

	err := c.AddIndexers(indexer.Indexers[*obj]{"fresh": indexer.NamespaceIndex[*obj], byApp: indexer.LabelIndex[*obj]("x")})
	require.ErrorIs(t, err, indexer.ErrIndexConflict)
	assert.Contains(t, err.Error(), `"app"`)
	assert.Len(t, c.GetIndexers(), 2, "a conflict adds nothing")
	_, err = c.ByIndex("fresh", "a")
	require.ErrorIs(t, err, indexer.ErrUnknownIndex)

	require.NoError(t, c.Add(pod("a", "r", "web")))
	assert.Equal(t, []string{"a/p", "a/r", "b/q"}, keys(t, c, byApp, "web"), "later adds reach the new index")
	assertIndicesFresh(t, c)
}

// conformance 56
func TestIndexReturnsUnion(t *testing.T) {
	c := newCache()
	require.NoError(t, c.Add(pod("a", "p1", "", "u1")))
	require.NoError(t, c.Add(pod("a", "p2", "", "u2")))
	require.NoError(t, c.Add(pod("a", "p3", "", "u1", "u2")))
	require.NoError(t, c.Add(pod("a", "p4", "", "u3")))
	got, err := c.Index(indexer.Owner, pod("", "probe", "", "u1", "u2"))
	require.NoError(t, err)
	assert.Equal(t, []string{"p1", "p2", "p3"}, names(got), "each object once")
	got, err = c.Index(indexer.Owner, pod("", "probe", "", "u3"))
	require.NoError(t, err)
	assert.Equal(t, []string{"p4"}, names(got))
	got, err = c.Index(indexer.Owner, pod("", "probe", ""))
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestGetAndErrors(t *testing.T) {
	c := newCache()
	p := pod("a", "p", "web")
	require.NoError(t, c.Add(p))
	got, ok, err := c.Get(pod("a", "p", ""))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Same(t, p, got)
	assert.Equal(t, 1, c.Len())
	assert.Equal(t, []*obj{p}, c.List())

	nameless := &obj{ns: "a"}
	require.ErrorIs(t, c.Add(nameless), store.ErrNoName)
	require.ErrorIs(t, c.Update(nameless), store.ErrNoName)
	require.ErrorIs(t, c.Delete(nameless), store.ErrNoName)
	_, _, err = c.Get(nameless)
	require.ErrorIs(t, err, store.ErrNoName)
	var nilKey store.KeyFunc[*obj]
	require.ErrorIs(t, indexer.New(nilKey, nil).Add(p), store.ErrNoKeyFunc)
}

func TestGetIndexersIsACopy(t *testing.T) {
	c := newCache()
	got := c.GetIndexers()
	assert.Len(t, got, 3)
	delete(got, indexer.Namespace)
	assert.Len(t, c.GetIndexers(), 3)
}

func TestStockIndexFuncs(t *testing.T) {
	v, err := indexer.NamespaceIndex(pod("", "node", ""))
	require.NoError(t, err)
	assert.Equal(t, []string{""}, v, "cluster-scoped objects share the empty namespace")
	v, err = indexer.LabelIndex[*obj]("app")(pod("a", "p", ""))
	require.NoError(t, err)
	assert.Empty(t, v)
	v, err = indexer.OwnerIndex(pod("a", "p", "", "u1", "u2"))
	require.NoError(t, err)
	assert.Equal(t, []string{"u1", "u2"}, v)
}

// A set shrinking back to one key, then growing again, keeps the right
// members (the set switches between its inline and map forms).
func TestSetFormsRoundTrip(t *testing.T) {
	c := newCache()
	for _, step := range []struct {
		op   string
		name string
		want []string
	}{
		{"add", "1", []string{"ns/1"}},
		{"add", "2", []string{"ns/1", "ns/2"}},
		{"add", "3", []string{"ns/1", "ns/2", "ns/3"}},
		{"del", "1", []string{"ns/2", "ns/3"}},
		{"del", "3", []string{"ns/2"}},
		{"add", "2", []string{"ns/2"}},
		{"add", "4", []string{"ns/2", "ns/4"}},
		{"del", "2", []string{"ns/4"}},
		{"del", "4", []string{}},
	} {
		o := pod("ns", step.name, "web")
		if step.op == "add" {
			require.NoError(t, c.Add(o))
		} else {
			require.NoError(t, c.Delete(o))
		}
		assert.Equal(t, step.want, keys(t, c, byApp, "web"), "%s %s", step.op, step.name)
	}
	assert.Empty(t, values(t, c, byApp))
}

func TestConcurrentReadersAndWriters(t *testing.T) {
	c := newCache()
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := range 300 {
				o := pod(fmt.Sprint("ns", i%3), fmt.Sprint(w, "-", i%17), fmt.Sprint("app", i%5), fmt.Sprint("u", i%7))
				switch i % 5 {
				case 0, 1, 2:
					assert.NoError(t, c.Add(o))
				case 3:
					assert.NoError(t, c.Delete(o))
				case 4:
					assert.NoError(t, c.Update(o))
				}
			}
		})
		wg.Go(func() {
			for i := range 300 {
				objs, err := c.ByIndex(byApp, fmt.Sprint("app", i%5))
				assert.NoError(t, err)
				for _, o := range objs {
					assert.NotNil(t, o, "every indexed key has an item")
				}
				_, err = c.Index(indexer.Owner, pod("", "x", "", "u1", "u2"))
				assert.NoError(t, err)
				_, _ = c.ListIndexFuncValues(indexer.Namespace)
			}
		})
	}
	wg.Go(func() {
		assert.NoError(t, c.AddIndexers(indexer.Indexers[*obj]{"late": indexer.NamespaceIndex[*obj]}))
	})
	testwait.Group(t, &wg, "the concurrent readers, writers and AddIndexers to finish")
	assertIndicesFresh(t, c)
}

// assertIndicesFresh checks every index of c against a scan of c's items
// with its index functions: the values with objects, the keys under each,
// and Index's union for objects of two values.
func assertIndicesFresh(t *testing.T, c *indexer.Cache[*obj]) {
	t.Helper()
	for name, fn := range c.GetIndexers() {
		want := map[string][]string{}
		for _, o := range c.List() {
			vs, err := fn(o)
			require.NoError(t, err)
			for _, v := range vs {
				want[v] = append(want[v], o.ns+"/"+o.name)
			}
		}
		wantValues := slices.Sorted(maps.Keys(want))
		if wantValues == nil {
			wantValues = []string{}
		}
		assert.Equal(t, wantValues, values(t, c, name), "values of %s", name)
		for _, v := range append(wantValues, "no-such-value") {
			slices.Sort(want[v])
			got := keys(t, c, name, v)
			assert.Equal(t, len(want[v]), len(got), "%s=%s", name, v)
			if len(want[v]) > 0 {
				assert.Equal(t, want[v], got, "%s=%s", name, v)
			}
			objs, err := c.ByIndex(name, v)
			require.NoError(t, err)
			assert.Len(t, objs, len(want[v]), "ByIndex(%s, %s)", name, v)
		}
		if name == indexer.Owner && len(wantValues) > 0 { // a probe of two values
			union := slices.Clone(want[wantValues[0]])
			union = append(union, want[wantValues[len(wantValues)-1]]...)
			slices.Sort(union)
			union = slices.Compact(union)
			probe := &obj{owners: []string{wantValues[0], wantValues[len(wantValues)-1]}}
			got, err := c.Index(name, probe)
			require.NoError(t, err)
			var gotKeys []string
			for _, o := range got {
				gotKeys = append(gotKeys, o.ns+"/"+o.name)
			}
			slices.Sort(gotKeys)
			assert.Equal(t, union, gotKeys, "Index(%s) of two values", name)
		}
	}
}

// TestIndicesAgreeWithAScanThroughEveryForm drives a cache through an
// index's forms (decision 46): every object under one value (kept as the store's own
// keys), a second value arriving (the set built once), back to one value
// and empty (uniform again), and AddIndexers over uniform and mixed items,
// checking every answer against a scan after each step.
func TestIndicesAgreeWithAScanThroughEveryForm(t *testing.T) {
	c := newCache()
	step := func(what string, f func() error) {
		t.Helper()
		require.NoError(t, f(), what)
		assertIndicesFresh(t, c)
	}
	for i := range 4 {
		step("add a uniform object", func() error { return c.Add(pod("a", fmt.Sprint(i), "web", "rs1")) })
	}
	step("update keeping the values", func() error { return c.Update(pod("a", "1", "web", "rs1")) })
	step("update to a second owner value", func() error { return c.Update(pod("a", "1", "web", "rs2")) })
	step("an object of another namespace", func() error { return c.Add(pod("b", "x", "web", "rs1")) })
	step("an object of no label", func() error { return c.Add(pod("a", "nolabel", "", "rs1")) })
	for _, o := range c.List() {
		step("delete "+o.name, func() error { return c.Delete(o) })
	}
	step("the first object of an empty cache", func() error { return c.Add(pod("c", "1", "api", "rs3", "rs4")) })
	step("a second one like it", func() error { return c.Add(pod("c", "2", "api", "rs3", "rs4")) })
	step("delete it", func() error { return c.Delete(pod("c", "2", "")) })
	step("update the last to other values", func() error { return c.Update(pod("c", "1", "db", "rs5")) })
	step("delete the last", func() error { return c.Delete(pod("c", "1", "")) })
	step("add after empty", func() error { return c.Add(pod("d", "1", "db", "rs5")) })
	step("an update moving the only object", func() error { return c.Update(pod("e", "1", "api", "rs6")) })
	step("index uniform items late", func() error {
		return c.AddIndexers(indexer.Indexers[*obj]{"ns2": indexer.NamespaceIndex[*obj]})
	})
	step("a second value after the late index", func() error { return c.Add(pod("f", "1", "api", "rs6")) })
	step("index mixed items late", func() error {
		return c.AddIndexers(indexer.Indexers[*obj]{"ns3": indexer.NamespaceIndex[*obj]})
	})
	step("index items some of which have no value", func() error {
		require.NoError(t, c.Add(pod("f", "2", "")))
		return c.AddIndexers(indexer.Indexers[*obj]{"app2": indexer.LabelIndex[*obj]("app")})
	})
}
