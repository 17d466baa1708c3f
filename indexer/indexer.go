package indexer

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/listwatch/listwatch/store"
)

// IndexFunc returns the values an object is indexed under. It must be pure.
type IndexFunc[T any] func(T) ([]string, error)

// Indexers names index functions.
type Indexers[T any] map[string]IndexFunc[T]

var (
	// ErrUnknownIndex is returned, wrapped with the name, for a query on an
	// index that was never added.
	ErrUnknownIndex = errors.New("unknown index")
	// ErrIndexConflict is returned by AddIndexers for a name already in use.
	ErrIndexConflict = errors.New("index already exists")
)

// Cache is a store.Store with named indices, kept in step with its objects
// under the store's lock. The zero value is not usable; call New.
type Cache[T any] struct {
	*store.Store[T] // Add, Update, Delete, Get, GetByKey, List, ListKeys, Len
	ix              *indices[T]
}

// indices are a Cache's indices, the store.Index of its Store. They are
// guarded by the store's lock: written in its Put and Remove and in
// Reindex, read in View.
type indices[T any] struct {
	// byName and ordered hold the same indices; ordered (by name) pairs each
	// index with its position in a values slice computed ahead of a write.
	byName  map[string]*index[T]
	ordered []*index[T]
	// items is the store's own map, which the store never replaces: a
	// uniform index answers from its keys, under the store's lock.
	items map[string]T
}

// New returns an empty Cache filing objects under key(obj) and indexing
// them with indexers (which may be nil). A nil key makes every write fail
// with store.ErrNoKeyFunc.
func New[T any](key store.KeyFunc[T], indexers Indexers[T]) *Cache[T] {
	ix := &indices[T]{byName: make(map[string]*index[T])}
	for _, name := range slices.Sorted(maps.Keys(indexers)) {
		ix.add(newIndex(name, indexers[name]))
	}
	s := store.NewIndexed(key, ix)
	s.View(func(items map[string]T) { ix.items = items })
	return &Cache[T]{Store: s, ix: ix}
}

func (ix *indices[T]) add(x *index[T]) {
	ix.byName[x.name] = x
	ix.ordered = append(ix.ordered, x)
}

// valueBuf sizes the on-stack scratch for index values; more indices than
// this spill to the heap.
const valueBuf = 4

// Put files key under obj's values, moving it from old's if replacing. It
// computes every value before changing anything, so a failing index
// function changes nothing.
func (ix *indices[T]) Put(key string, obj, old T, replacing bool) error {
	var nbuf, obuf [valueBuf][]string
	next, err := ix.values(nbuf[:0], obj)
	if err != nil {
		return err
	}
	var prev [][]string
	if replacing {
		if prev, err = ix.values(obuf[:0], old); err != nil {
			return fmt.Errorf("stored object: %w", err)
		}
	}
	for i, x := range ix.ordered {
		if replacing {
			x.replace(ix.items, key, prev[i], next[i])
		} else {
			x.put(ix.items, key, next[i])
		}
	}
	return nil
}

// Remove takes key out of old's values.
func (ix *indices[T]) Remove(key string, old T) error {
	var obuf [valueBuf][]string
	prev, err := ix.values(obuf[:0], old)
	if err != nil {
		return fmt.Errorf("stored object: %w", err)
	}
	for i, x := range ix.ordered {
		x.remove(key, prev[i]) // nothing to remove while uniform
	}
	return nil
}

// values computes obj's values for every index, in ordered order,
// appending to buf.
func (ix *indices[T]) values(buf [][]string, obj T) ([][]string, error) {
	for _, x := range ix.ordered {
		v, err := x.fn(obj)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", x.name, err)
		}
		buf = append(buf, v)
	}
	return buf, nil
}

func (ix *indices[T]) lookup(name string) (*index[T], error) {
	if x, ok := ix.byName[name]; ok {
		return x, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownIndex, name)
}

// Index returns the objects sharing any of obj's values in the named index.
func (c *Cache[T]) Index(name string, obj T) (out []T, err error) {
	c.View(func(items map[string]T) {
		var x *index[T]
		if x, err = c.ix.lookup(name); err != nil {
			return
		}
		var values []string
		if values, err = x.fn(obj); err != nil {
			err = fmt.Errorf("index %q: %w", name, err)
			return
		}
		if len(values) == 1 {
			out = objects(items, x, values[0])
			return
		}
		union := make(map[string]struct{})
		for _, v := range values {
			x.each(items, v, func(key string) { union[key] = struct{}{} })
		}
		out = make([]T, 0, len(union))
		for key := range union {
			out = append(out, items[key])
		}
	})
	return out, err
}

// ByIndex returns the objects filed under value in the named index. It
// allocates nothing but the result.
func (c *Cache[T]) ByIndex(name, value string) (out []T, err error) {
	c.View(func(items map[string]T) {
		var x *index[T]
		if x, err = c.ix.lookup(name); err == nil {
			out = objects(items, x, value)
		}
	})
	return out, err
}

func objects[T any](items map[string]T, x *index[T], value string) []T {
	out := make([]T, 0, x.size(items, value))
	x.each(items, value, func(key string) { out = append(out, items[key]) })
	return out
}

// IndexKeys returns the keys filed under value in the named index.
func (c *Cache[T]) IndexKeys(name, value string) (out []string, err error) {
	c.View(func(items map[string]T) {
		var x *index[T]
		if x, err = c.ix.lookup(name); err != nil {
			return
		}
		out = make([]string, 0, x.size(items, value))
		x.each(items, value, func(key string) { out = append(out, key) })
	})
	return out, err
}

// ListIndexFuncValues returns the values of the named index that have
// objects.
func (c *Cache[T]) ListIndexFuncValues(name string) (out []string, err error) {
	c.View(func(items map[string]T) {
		var x *index[T]
		if x, err = c.ix.lookup(name); err == nil {
			out = x.values(items)
		}
	})
	return out, err
}

// GetIndexers returns the index functions by name.
func (c *Cache[T]) GetIndexers() Indexers[T] {
	var out Indexers[T]
	c.View(func(map[string]T) {
		out = make(Indexers[T], len(c.ix.ordered))
		for _, x := range c.ix.ordered {
			out[x.name] = x.fn
		}
	})
	return out
}

// AddIndexers adds indices and indexes every stored object under them. A
// name already in use, or an index function failing on a stored object,
// is an error and adds none of the indices.
func (c *Cache[T]) AddIndexers(indexers Indexers[T]) error {
	return c.Reindex(func(items map[string]T) error {
		names := slices.Sorted(maps.Keys(indexers))
		for _, name := range names {
			if _, ok := c.ix.byName[name]; ok {
				return fmt.Errorf("add indexers: %w: %q", ErrIndexConflict, name)
			}
		}
		built := make([]*index[T], len(names))
		for i, name := range names {
			x, err := build(name, indexers[name], items)
			if err != nil {
				return fmt.Errorf("add indexers: %w", err)
			}
			built[i] = x
		}
		for _, x := range built {
			c.ix.add(x)
		}
		return nil
	})
}
