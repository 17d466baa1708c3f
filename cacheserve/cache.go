package cacheserve

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
)

// DefaultHistory is the most events a Cache keeps for watches from a
// resourceVersion when Cache.History is 0: kube-apiserver's watch cache's
// bound. Below it the history grows and shrinks as the watch cache's does
// (apiserve.Log, decision 44).
const DefaultHistory = apiserve.DefaultMaxHistory

// Event types, as the watch protocol spells them.
const (
	added    = apiserve.Added
	modified = apiserve.Modified
	deleted  = apiserve.Deleted
)

// Cache holds what one informer's reflector delivered, version by version,
// as a reflector.Sink and reflector.Progresser the informer mirrors to
// (listwatch.Informer.Mirror, decision 43): the objects at the version
// reached, and a bounded history of the events that led there. Everything
// a list or watch answers comes from it, exact to the resourceVersion.
//
// The objects are the informer's own (*raw.Object is immutable and
// shared): the cost is a map and the history, not a copy of the bytes.
type Cache struct {
	// History bounds the events kept; 0 means DefaultHistory.
	History int

	mu sync.RWMutex
	// objs is namespace → name → object. The names are the objects' own
	// (raw.Object.Name points into the object's allocation, which the map
	// keeps alive anyway), so holding an object costs a map slot and no
	// key of its own; each namespace is copied once, when its map is made,
	// never taken from an object (it would keep that object's bytes alive
	// after the object is replaced). A map of joined keys would pay a
	// string per object, a second copy of the informer's store's keys.
	objs   map[string]map[string]*raw.Object
	rv     int64 // the version reached
	synced bool
	// log is the history; a relist upstream that it cannot bridge resets
	// it, which ends every watch with a 410.
	log apiserve.Log[*raw.Object]
	// moved is closed, and replaced, whenever rv or the history change.
	moved chan struct{}
	// snaps are the few last snapshots built, newest last, so the pages
	// of a list come from one sorted copy. Readers holding mu for
	// reading share them under snapMu.
	snapMu sync.Mutex
	snaps  []*snapshot
}

// NewCache returns an empty Cache, unsynced until the informer's first
// list reaches it.
func NewCache() *Cache {
	return &Cache{objs: map[string]map[string]*raw.Object{}, moved: make(chan struct{})}
}

func key(o *raw.Object) string { return store.JoinKey(o.Namespace(), o.Name()) }

// lookup returns the object under namespace and name, or nil.
func (c *Cache) lookup(namespace, name string) *raw.Object { return c.objs[namespace][name] }

// put holds o, in place of any object of its namespace and name. The
// assignment replaces the map's key with o's own name as well as the
// value (Go's maps update a string key on assignment), so nothing is
// left pointing into the object replaced:
// TestCacheFreesWhatItNoLongerHolds proves it.
func (c *Cache) put(o *raw.Object) {
	ns := o.Namespace()
	m := c.objs[ns]
	if m == nil {
		m = map[string]*raw.Object{}
		c.objs[strings.Clone(ns)] = m
	}
	m[o.Name()] = o
}

// remove drops the object under o's namespace and name, and the
// namespace's map with its last object.
func (c *Cache) remove(o *raw.Object) {
	ns := o.Namespace()
	m := c.objs[ns]
	delete(m, o.Name())
	if len(m) == 0 {
		delete(c.objs, ns)
	}
}

func parseRV(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("resourceVersion %q: not a version this cache can order", s)
	}
	return n, nil
}

// wake tells waiting lists and watches that something moved; c.mu is
// held for writing.
func (c *Cache) wake() {
	close(c.moved)
	c.moved = make(chan struct{})
}

// Add records an ADDED event (reflector.Sink).
func (c *Cache) Add(obj *raw.Object) error { return c.change(added, obj) }

// Update records a MODIFIED event (reflector.Sink).
func (c *Cache) Update(obj *raw.Object) error { return c.change(modified, obj) }

// Delete records a DELETED event (reflector.Sink).
func (c *Cache) Delete(obj *raw.Object) error { return c.change(deleted, obj) }

// Resync changes nothing: the cache already holds every object.
func (c *Cache) Resync() error { return nil }

func (c *Cache) change(typ string, obj *raw.Object) error {
	rv, err := parseRV(obj.ResourceVersion())
	if err != nil {
		return fmt.Errorf("cacheserve: %s %s: %w", typ, key(obj), err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.wake()
	if !c.synced {
		return nil // before the first list there is nothing to change
	}
	prev := c.lookup(obj.Namespace(), obj.Name())
	switch {
	case typ == deleted:
		c.remove(obj)
	case typ == added && prev != nil:
		typ = modified
		c.put(obj)
	case typ == modified && prev == nil:
		typ = added
		c.put(obj)
	default:
		c.put(obj)
	}
	if rv <= c.rv {
		// An event that does not move the version (a watch from "0"
		// replaying state) cannot be placed in the history: the state is
		// right, the history starts again here.
		c.snaps = nil
		c.resetLocked(c.rv)
		return nil
	}
	c.rv = rv
	c.log.Max = c.History
	c.log.Append(apiserve.Event[*raw.Object]{Type: typ, RV: rv, Object: obj, Prev: prev})
	return nil
}

// Replace takes a full list upstream (reflector.Sink). The first one
// syncs the cache. A later one at the version the cache holds changes
// nothing (the state at one version is one state); at any other version
// the events between cannot be known one by one, so the history starts
// again and every watch ends with a 410, as kube-apiserver's cache does
// when it relists: clients relist, cheaply, from this cache.
func (c *Cache) Replace(items []*raw.Object, resourceVersion string) error {
	rv, err := parseRV(resourceVersion)
	if err != nil {
		return fmt.Errorf("cacheserve: replace: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.wake()
	if c.synced && rv == c.rv {
		return nil
	}
	// Each namespace's map is made at its final size, as one map of
	// them all was: grown one object at a time it would end the same
	// size but leave the garbage of every step.
	sizes := map[string]int{}
	for _, o := range items {
		sizes[o.Namespace()]++
	}
	c.objs = make(map[string]map[string]*raw.Object, len(sizes))
	for ns, n := range sizes {
		c.objs[strings.Clone(ns)] = make(map[string]*raw.Object, n)
	}
	for _, o := range items {
		c.put(o)
	}
	c.rv = rv
	c.snaps = nil
	c.resetLocked(rv)
	c.synced = true
	return nil
}

// resetLocked empties the history, from rv on, and ends every watch.
func (c *Cache) resetLocked(rv int64) { c.log.Reset(rv) }

// Progress moves the version to a bookmark's (reflector.Progresser).
func (c *Cache) Progress(resourceVersion string) {
	rv, err := parseRV(resourceVersion)
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.synced || rv <= c.rv {
		return
	}
	c.rv = rv
	c.wake()
}

// ResourceVersion is the version the cache has reached, and whether it
// has synced.
func (c *Cache) ResourceVersion() (int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv, c.synced
}

// snapshot is the objects at one version, in the order of their joined
// keys (store.JoinKey, kube-apiserver's etcd order): immutable, so the
// pages of a list read it without a lock. The keys are not kept: they
// are the objects' own namespace and name, compared as joined (cmpKey).
type snapshot struct {
	rv   int64
	objs []*raw.Object
}

// objKey is an object's namespace and name, the object's own strings:
// a key of transient maps that costs no allocation.
type objKey struct{ namespace, name string }

func keyOf(o *raw.Object) objKey { return objKey{o.Namespace(), o.Name()} }

// snapshotAtLocked returns the state at rv, which must lie in [floor,
// c.rv]: the current objects with the events after rv undone. c.mu is
// held, for reading at least.
func (c *Cache) snapshotAtLocked(rv int64) *snapshot {
	c.snapMu.Lock()
	defer c.snapMu.Unlock()
	for _, s := range c.snaps {
		if s.rv == rv {
			return s
		}
	}
	s := &snapshot{rv: rv, objs: c.objectsAtLocked(rv)}
	c.snaps = append(c.snaps, s)
	if len(c.snaps) > 4 {
		c.snaps = c.snaps[1:]
	}
	return s
}

// objectsAtLocked returns the objects at rv, in their joined keys'
// order. c.mu is held, for reading at least.
func (c *Cache) objectsAtLocked(rv int64) []*raw.Object {
	var undo map[objKey]*raw.Object
	if rv < c.rv {
		undo = map[objKey]*raw.Object{}
		// Newest first, so the earliest event's previous state wins.
		c.log.Back(rv, func(ev apiserve.Event[*raw.Object]) bool {
			undo[keyOf(ev.Object)] = ev.Prev
			return true
		})
	}
	// Each namespace's names at rv: the current ones not undone, and the
	// undone ones that were there.
	n := 0
	byNs := make(map[string][]string, len(c.objs))
	for ns, m := range c.objs {
		names := make([]string, 0, len(m))
		for name := range m {
			if _, ok := undo[objKey{ns, name}]; !ok {
				names = append(names, name)
			}
		}
		byNs[ns], n = names, n+len(names)
	}
	for k, o := range undo {
		if o != nil {
			byNs[k.namespace], n = append(byNs[k.namespace], k.name), n+1
		}
	}
	// The joined keys sort namespace by namespace: a namespace holds no
	// '/', so all of one's keys compare to all of another's as "ns/"
	// compares to "other/" (and a resource's objects all have a namespace
	// or none has). Sorting the names alone so takes a quarter of the
	// time sorting the objects by their keys would.
	nss := slices.Collect(maps.Keys(byNs))
	slices.SortFunc(nss, func(a, b string) int { return cmpKey(a, "", b, "") })
	objs := make([]*raw.Object, 0, n)
	for _, ns := range nss {
		names := byNs[ns]
		slices.Sort(names)
		for _, name := range names {
			o, ok := undo[objKey{ns, name}]
			if !ok {
				o = c.objs[ns][name]
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// from returns the index of the first object whose joined key is start
// or after it.
func (s *snapshot) from(start string) int {
	i, _ := slices.BinarySearchFunc(s.objs, start, func(o *raw.Object, start string) int {
		return cmpKey(o.Namespace(), o.Name(), "", start)
	})
	return i
}

// cmpKey compares the joined keys of two namespaces and names
// (store.JoinKey: "ns/name", or the name alone without a namespace) as
// strings.Compare would compare them, without building them. That is
// not the order of (namespace, name): '-' sorts before '/', so
// namespace "a-b" comes before "a".
func cmpKey(ns1, name1, ns2, name2 string) int {
	if ns1 == ns2 {
		return strings.Compare(name1, name2)
	}
	a := [...]string{ns1, sep(ns1), name1}
	b := [...]string{ns2, sep(ns2), name2}
	var i, j int
	for {
		for a[i] == "" && i < len(a)-1 {
			i++
		}
		for b[j] == "" && j < len(b)-1 {
			j++
		}
		if a[i] == "" || b[j] == "" {
			return cmp.Compare(len(a[i]), len(b[j]))
		}
		n := min(len(a[i]), len(b[j]))
		if c := strings.Compare(a[i][:n], b[j][:n]); c != 0 {
			return c
		}
		a[i], b[j] = a[i][n:], b[j][n:]
	}
}

// sep is what store.JoinKey puts after namespace.
func sep(namespace string) string {
	if namespace == "" {
		return ""
	}
	return "/"
}

// get returns the current object under namespace and name.
func (c *Cache) get(namespace, name string) (*raw.Object, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lookup(namespace, name), c.rv, c.synced
}
