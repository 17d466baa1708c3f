package cacheserve

import (
	"fmt"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// TestCmpKeyIsTheJoinedKeysOrder is decision 43's list order, kept by
// decision 46's map without keys of its own: the cache
// compares namespaces and names as their joined keys compare as strings
// (kube-apiserver's etcd order), without building the keys. Every pair
// of a set chosen to straddle '/' is compared both ways, and so is every
// namespace and name against a continue token's start.
func TestCmpKeyIsTheJoinedKeysOrder(t *testing.T) {
	parts := []string{"", "a", "a-b", "a.b", "a0", "ab", "a/b", "b", "\x00", "a-", "a/"}
	var keys []objKey
	for _, ns := range parts {
		for _, name := range parts {
			keys = append(keys, objKey{ns, name})
		}
	}
	for _, x := range keys {
		for _, y := range keys {
			want := strings.Compare(store.JoinKey(x.namespace, x.name), store.JoinKey(y.namespace, y.name))
			require.Equal(t, want, cmpKey(x.namespace, x.name, y.namespace, y.name), "%q against %q", x, y)
		}
		for _, start := range parts {
			want := strings.Compare(store.JoinKey(x.namespace, x.name), start)
			require.Equal(t, want, cmpKey(x.namespace, x.name, "", start), "%q against start %q", x, start)
		}
	}
}

// TestListOrderIsTheJoinedKeysOrder is decision 43, kept by decision 46's
// map without keys of its own: a list is in the
// order of the joined keys "namespace/name", as kube-apiserver's (etcd's)
// is, which is not that of (namespace, name): '-' sorts before '/', so
// namespace "a-b" lists before "a" and "a0" after it. Whole, in pages of
// one with their continue tokens, at an older version (with a namespace
// since emptied), and by namespace (which must not take in "a-b"'s pods).
func TestListOrderIsTheJoinedKeysOrder(t *testing.T) {
	r := newRig(t)
	for _, p := range [][2]string{{"a", "y"}, {"a0", "x"}, {"a-b", "x"}, {"a", "x"}, {"a-b", "y"}} {
		_, err := r.up.Create(watchtest.Pods, pod(p[0], p[1], "node-a", nil))
		require.NoError(t, err)
	}
	first := r.caughtUp(t)
	_, err := r.up.Delete(watchtest.Pods, "a", "x")
	require.NoError(t, err)
	_, err = r.up.Delete(watchtest.Pods, "a0", "x") // the namespace's last
	require.NoError(t, err)
	_, err = r.up.Create(watchtest.Pods, pod("a-b", "w", "node-a", nil))
	require.NoError(t, err)
	r.caughtUp(t)

	// keys lists path, page after page, as namespace/name.
	keys := func(path string) []string {
		t.Helper()
		var out []string
		for range 10 {
			code, _, body := get(t, r.local.URL, path)
			require.Equal(t, 200, code, "%s: %s", path, body)
			l := normal(t, body)
			for _, it := range l.Items {
				m := it["metadata"].(map[string]any)
				out = append(out, m["namespace"].(string)+"/"+m["name"].(string))
			}
			cont, _ := l.Metadata["continue"].(string)
			if cont == "" {
				return out
			}
			u, err := url.Parse(path)
			require.NoError(t, err)
			v := u.Query()
			v.Del("resourceVersion")
			v.Del("resourceVersionMatch")
			v.Set("continue", cont)
			path = u.Path + "?" + v.Encode()
		}
		t.Fatalf("%s: more than 10 pages", path)
		return nil
	}
	now := []string{"a-b/w", "a-b/x", "a-b/y", "a/y"}
	exact := url.Values{"resourceVersion": {itoa(first)}, "resourceVersionMatch": {"Exact"}}.Encode()
	for path, want := range map[string][]string{
		"/api/v1/pods":                        now,
		"/api/v1/pods?limit=1":                now,
		"/api/v1/pods?limit=2&" + exact:       {"a-b/x", "a-b/y", "a/x", "a/y", "a0/x"},
		"/api/v1/namespaces/a/pods":           {"a/y"},
		"/api/v1/namespaces/a/pods?" + exact:  {"a/x", "a/y"},
		"/api/v1/namespaces/a-b/pods?limit=1": {"a-b/w", "a-b/x", "a-b/y"},
		"/api/v1/namespaces/a0/pods?" + exact: {"a0/x"},
	} {
		require.Equal(t, want, keys(path), path)
		require.True(t, slices.IsSorted(want), "the joined keys' string order")
	}
}

// TestCacheFreesWhatItNoLongerHolds (decision 46): the cache's maps are keyed by the
// objects' own names, which point into the objects' allocations, so a
// key left pointing into an object replaced, deleted or relisted would
// keep its bytes (1.8 KB a pod) alive. None is: once the cache no longer
// holds an object, a collection frees its allocation, though the cache
// still holds others of its namespace. Each change here is a relist or
// does not move the version, so the history (which keeps what events
// replaced, by design) starts again and holds none of it either.
func TestCacheFreesWhatItNoLongerHolds(t *testing.T) {
	obj := func(ns, name, rv string) *raw.Object {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":%q,"resourceVersion":%q},"spec":{"nodeName":"node-a"}}`, name, ns, rv))
		require.NoError(t, err)
		return o
	}
	sync := func(c *Cache, items ...*raw.Object) {
		require.NoError(t, c.Replace(items, "5"))
	}
	for _, tc := range []struct {
		name string
		hold func(c *Cache, old *raw.Object) // puts old, ns/pod, in c
		drop func(c *Cache) error            // makes c let go of it
		want []string                        // c's objects after, with their versions
	}{{
		name: "update",
		hold: func(c *Cache, old *raw.Object) { sync(c, old, obj("ns", "other", "5")) },
		drop: func(c *Cache) error { return c.Update(obj("ns", "pod", "4")) },
		want: []string{"ns/other@5", "ns/pod@4"},
	}, {
		name: "delete",
		hold: func(c *Cache, old *raw.Object) { sync(c, old, obj("ns", "other", "5")) },
		drop: func(c *Cache) error { return c.Delete(obj("ns", "pod", "5")) },
		want: []string{"ns/other@5"},
	}, {
		// Whichever of a relist's objects its namespace's key came from.
		name: "delete the last of its namespace a relist listed",
		hold: func(c *Cache, old *raw.Object) { sync(c, obj("ns", "other", "5"), old) },
		drop: func(c *Cache) error { return c.Delete(obj("ns", "pod", "5")) },
		want: []string{"ns/other@5"},
	}, {
		name: "replace",
		hold: func(c *Cache, old *raw.Object) { sync(c, old, obj("ns", "other", "5")) },
		drop: func(c *Cache) error {
			return c.Replace([]*raw.Object{obj("ns", "pod", "6"), obj("ns", "other", "6")}, "6")
		},
		want: []string{"ns/other@6", "ns/pod@6"},
	}, {
		// The namespace's map was made for old: its key is a copy.
		name: "delete the object that opened its namespace",
		hold: func(c *Cache, old *raw.Object) {
			sync(c, obj("elsewhere", "x", "5"))
			require.NoError(t, c.Add(old))
			require.NoError(t, c.Add(obj("ns", "other", "5")))
		},
		drop: func(c *Cache) error { return c.Delete(obj("ns", "pod", "5")) },
		want: []string{"elsewhere/x@5", "ns/other@5"},
	}, {
		name: "update the object that opened its namespace",
		hold: func(c *Cache, old *raw.Object) {
			sync(c, obj("elsewhere", "x", "5"))
			require.NoError(t, c.Add(old))
		},
		drop: func(c *Cache) error { return c.Update(obj("ns", "pod", "3")) },
		want: []string{"elsewhere/x@5", "ns/pod@3"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCache()
			// The allocation old's name points into, the one a key of
			// it would keep alive; old itself is not kept.
			w := func() weak.Pointer[byte] {
				old := obj("ns", "pod", "5")
				tc.hold(c, old)
				return weak.Make(unsafe.StringData(old.Name()))
			}()
			runtime.GC()
			require.NotNil(t, w.Value(), "held while the cache holds it")
			require.NoError(t, tc.drop(c))
			for i := 0; i < 3 && w.Value() != nil; i++ {
				runtime.GC()
			}
			require.Nil(t, w.Value(), "still reachable once the cache let go of it")
			var got []string
			for _, o := range c.snapshotAtLocked(c.rv).objs {
				got = append(got, key(o)+"@"+o.ResourceVersion())
			}
			require.Equal(t, tc.want, got)
			runtime.KeepAlive(c)
		})
	}
}

// TestCacheDropsAnEmptiedNamespace: the map of a namespace whose last
// object goes goes with it, and comes back with its next object.
func TestCacheDropsAnEmptiedNamespace(t *testing.T) {
	obj := func(name, rv string) *raw.Object {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q}}`, name, rv))
		require.NoError(t, err)
		return o
	}
	c := NewCache()
	require.NoError(t, c.Replace([]*raw.Object{obj("a", "1"), obj("b", "1")}, "1"))
	require.Len(t, c.objs, 1)
	require.NoError(t, c.Delete(obj("a", "2")))
	require.NoError(t, c.Delete(obj("b", "3")))
	require.Empty(t, c.objs)
	o, rv, synced := c.get("ns", "a")
	require.Nil(t, o)
	require.Equal(t, int64(3), rv)
	require.True(t, synced)
	require.NoError(t, c.Add(obj("a", "4")))
	o, _, _ = c.get("ns", "a")
	require.Equal(t, "4", o.ResourceVersion())
	require.Len(t, c.objs["ns"], 1)
}

// TestListsReadFewSnapshotsAgain: the pages of a list at one version
// read one sorted snapshot, built once (decision 43); the cache keeps the
// four it built last, so a fifth version's list lets the first go.
func TestListsReadFewSnapshotsAgain(t *testing.T) {
	c := NewCache()
	require.NoError(t, c.Replace(nil, "10"))
	for rv := 11; rv <= 15; rv++ {
		require.NoError(t, c.Add(podAt(t, fmt.Sprint("p", rv), rv)))
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	first := c.snapshotAtLocked(11)
	require.Same(t, first, c.snapshotAtLocked(11), "a second page reads the same snapshot")
	require.Len(t, first.objs, 1)
	for rv := int64(12); rv <= 14; rv++ {
		c.snapshotAtLocked(rv)
	}
	require.Same(t, first, c.snapshotAtLocked(11), "four are kept")
	c.snapshotAtLocked(15)
	require.NotSame(t, first, c.snapshotAtLocked(11), "the oldest of five is let go")
}

// A version is any number from 0 up: a cache synced at "0" is synced.
func TestVersionZeroIsAVersion(t *testing.T) {
	c := NewCache()
	require.NoError(t, c.Replace(nil, "0"))
	rv, synced := c.ResourceVersion()
	require.True(t, synced)
	require.Zero(t, rv)
	require.Error(t, c.Replace(nil, "-1"))
}
