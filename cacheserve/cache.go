package cacheserve

import (
	"fmt"
	"slices"
	"strconv"
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

	mu     sync.RWMutex
	objs   map[string]*raw.Object
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
	return &Cache{objs: map[string]*raw.Object{}, moved: make(chan struct{})}
}

func key(o *raw.Object) string { return store.JoinKey(o.Namespace(), o.Name()) }

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
	k := key(obj)
	c.mu.Lock()
	defer c.mu.Unlock()
	defer c.wake()
	if !c.synced {
		return nil // before the first list there is nothing to change
	}
	prev := c.objs[k]
	switch {
	case typ == deleted:
		delete(c.objs, k)
	case typ == added && prev != nil:
		typ = modified
		c.objs[k] = obj
	case typ == modified && prev == nil:
		typ = added
		c.objs[k] = obj
	default:
		c.objs[k] = obj
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
	c.objs = make(map[string]*raw.Object, len(items))
	for _, o := range items {
		c.objs[key(o)] = o
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

// snapshot is the objects at one version, sorted by key: immutable, so
// the pages of a list read it without a lock.
type snapshot struct {
	rv   int64
	keys []string
	objs []*raw.Object
}

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
	var undo map[string]*raw.Object
	if rv < c.rv {
		undo = map[string]*raw.Object{}
		// Newest first, so the earliest event's previous state wins.
		c.log.Back(rv, func(ev apiserve.Event[*raw.Object]) bool {
			undo[key(ev.Object)] = ev.Prev
			return true
		})
	}
	keys := make([]string, 0, len(c.objs)+len(undo))
	for k := range c.objs {
		if _, ok := undo[k]; !ok {
			keys = append(keys, k)
		}
	}
	for k, o := range undo {
		if o != nil {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	s := &snapshot{rv: rv, keys: keys, objs: make([]*raw.Object, len(keys))}
	for i, k := range keys {
		if o, ok := undo[k]; ok {
			s.objs[i] = o
		} else {
			s.objs[i] = c.objs[k]
		}
	}
	c.snaps = append(c.snaps, s)
	if len(c.snaps) > 4 {
		c.snaps = c.snaps[1:]
	}
	return s
}

// from returns the index of the first page item after the key start.
func (s *snapshot) from(start string) int {
	i, _ := slices.BinarySearch(s.keys, start)
	return i
}

// get returns the current object under k.
func (c *Cache) get(k string) (*raw.Object, int64, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	o := c.objs[k]
	return o, c.rv, c.synced
}
