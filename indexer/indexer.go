package indexer

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
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

// Cache is a keyed collection of objects with named indices. Reads share a sync.RWMutex and hand
// out stored objects without copying; treat them as immutable. The zero
// value is not usable; call New.
type Cache[T any] struct {
	key   KeyFunc[T]
	mu    sync.RWMutex
	items map[string]T
	// byName and ordered hold the same indices; ordered (by name) pairs each
	// index with its position in a values slice computed ahead of a write.
	byName  map[string]*index[T]
	ordered []*index[T]
	rv      string
}

// New returns an empty Cache filing objects under key(obj) and indexing
// them with indexers (which may be nil).
func New[T any](key KeyFunc[T], indexers Indexers[T]) *Cache[T] {
	if key == nil {
		key = func(T) (string, error) { return "", ErrNoKeyFunc }
	}
	c := &Cache[T]{key: key, items: make(map[string]T), byName: make(map[string]*index[T])}
	for _, name := range slices.Sorted(maps.Keys(indexers)) {
		c.addIndexLocked(name, indexers[name])
	}
	return c
}

func (c *Cache[T]) addIndexLocked(name string, fn IndexFunc[T]) *index[T] {
	x := &index[T]{name: name, fn: fn, sets: make(map[string]set)}
	c.byName[name] = x
	c.ordered = append(c.ordered, x)
	return x
}

// Add stores obj, replacing and re-indexing any object with the same key.
func (c *Cache[T]) Add(obj T) error { return c.put("add", obj) }

// Update is Add.
func (c *Cache[T]) Update(obj T) error { return c.put("update", obj) }

// valueBuf sizes the on-stack scratch for index values; more indices than
// this spill to the heap.
const valueBuf = 4

func (c *Cache[T]) put(op string, obj T) error {
	key, err := c.key(obj)
	if err != nil {
		return fmt.Errorf("indexer %s: %w", op, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var nbuf, obuf [valueBuf][]string
	next, err := c.valuesLocked(nbuf[:0], obj)
	if err != nil {
		return fmt.Errorf("indexer %s %q: %w", op, key, err)
	}
	old, had := c.items[key]
	var prev [][]string
	if had {
		if prev, err = c.valuesLocked(obuf[:0], old); err != nil {
			return fmt.Errorf("indexer %s %q: stored object: %w", op, key, err)
		}
	}
	for i, x := range c.ordered {
		if had {
			x.move(key, prev[i], next[i])
		} else {
			x.add(key, next[i])
		}
	}
	c.items[key] = obj
	noteVersion(&c.rv, obj)
	return nil
}

// valuesLocked computes obj's values for every index, in c.ordered order,
// appending to buf.
func (c *Cache[T]) valuesLocked(buf [][]string, obj T) ([][]string, error) {
	for _, x := range c.ordered {
		v, err := x.fn(obj)
		if err != nil {
			return nil, fmt.Errorf("index %q: %w", x.name, err)
		}
		buf = append(buf, v)
	}
	return buf, nil
}

// Delete removes the object with obj's key and its index entries. Deleting
// an absent key does nothing.
func (c *Cache[T]) Delete(obj T) error {
	key, err := c.key(obj)
	if err != nil {
		return fmt.Errorf("indexer delete: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	noteVersion(&c.rv, obj)
	old, had := c.items[key]
	if !had {
		return nil
	}
	var obuf [valueBuf][]string
	prev, err := c.valuesLocked(obuf[:0], old)
	if err != nil {
		return fmt.Errorf("indexer delete %q: stored object: %w", key, err)
	}
	for i, x := range c.ordered {
		x.remove(key, prev[i])
	}
	delete(c.items, key)
	return nil
}

// Get returns the stored object with obj's key.
func (c *Cache[T]) Get(obj T) (T, bool, error) {
	key, err := c.key(obj)
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("indexer get: %w", err)
	}
	return c.GetByKey(key)
}

// GetByKey returns the object filed under key. The error is always nil.
func (c *Cache[T]) GetByKey(key string) (T, bool, error) {
	c.mu.RLock()
	obj, ok := c.items[key]
	c.mu.RUnlock()
	return obj, ok, nil
}

// List returns every stored object, in no particular order.
func (c *Cache[T]) List() []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]T, 0, len(c.items))
	for _, obj := range c.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every key, in no particular order.
func (c *Cache[T]) ListKeys() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]string, 0, len(c.items))
	for key := range c.items {
		out = append(out, key)
	}
	return out
}

// Len is the number of stored objects.
func (c *Cache[T]) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.items)
}

// Replace makes items the whole content and rebuilds every index. Nothing
// changes if a key, transform or index function fails.
func (c *Cache[T]) Replace(items []T, resourceVersion string) error {
	next := make(map[string]T, len(items))
	for _, obj := range items {
		key, err := c.key(obj)
		if err != nil {
			return fmt.Errorf("indexer replace: %w", err)
		}
		next[key] = obj
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	sets := make([]map[string]set, len(c.ordered))
	for i, x := range c.ordered {
		built, err := x.build(next)
		if err != nil {
			return fmt.Errorf("indexer replace: %w", err)
		}
		sets[i] = built
	}
	for i, x := range c.ordered {
		x.sets = sets[i]
	}
	c.items = next
	c.rv = resourceVersion
	return nil
}

// Resync does nothing; it is there for the Store interface.
func (c *Cache[T]) Resync() error { return nil }

// LastResourceVersion is the version given to the last Replace, or of the
// last object written or deleted if T is Versioned, whichever came last; ""
// before either.
func (c *Cache[T]) LastResourceVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

func (c *Cache[T]) indexLocked(name string) (*index[T], error) {
	if x, ok := c.byName[name]; ok {
		return x, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownIndex, name)
}

// Index implements Indexer.
func (c *Cache[T]) Index(name string, obj T) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x, err := c.indexLocked(name)
	if err != nil {
		return nil, err
	}
	values, err := x.fn(obj)
	if err != nil {
		return nil, fmt.Errorf("index %q: %w", name, err)
	}
	if len(values) == 1 {
		return c.objectsLocked(x, values[0]), nil
	}
	union := make(map[string]struct{})
	for _, v := range values {
		if s, ok := x.sets[v]; ok {
			s.each(func(key string) { union[key] = struct{}{} })
		}
	}
	out := make([]T, 0, len(union))
	for key := range union {
		out = append(out, c.items[key])
	}
	return out, nil
}

// ByIndex implements Indexer. It allocates nothing but the result.
func (c *Cache[T]) ByIndex(name, value string) ([]T, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x, err := c.indexLocked(name)
	if err != nil {
		return nil, err
	}
	return c.objectsLocked(x, value), nil
}

func (c *Cache[T]) objectsLocked(x *index[T], value string) []T {
	s, ok := x.sets[value]
	if !ok {
		return []T{}
	}
	out := make([]T, 0, s.len())
	s.each(func(key string) { out = append(out, c.items[key]) })
	return out
}

// IndexKeys implements Indexer.
func (c *Cache[T]) IndexKeys(name, value string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x, err := c.indexLocked(name)
	if err != nil {
		return nil, err
	}
	s, ok := x.sets[value]
	if !ok {
		return []string{}, nil
	}
	out := make([]string, 0, s.len())
	s.each(func(key string) { out = append(out, key) })
	return out, nil
}

// ListIndexFuncValues implements Indexer.
func (c *Cache[T]) ListIndexFuncValues(name string) ([]string, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	x, err := c.indexLocked(name)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(x.sets))
	for v := range x.sets {
		out = append(out, v)
	}
	return out, nil
}

// GetIndexers implements Indexer.
func (c *Cache[T]) GetIndexers() Indexers[T] {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make(Indexers[T], len(c.ordered))
	for _, x := range c.ordered {
		out[x.name] = x.fn
	}
	return out
}

// AddIndexers adds indices and indexes every stored object under them. A
// name already in use, or an index function failing on a stored object,
// is an error and adds none of the indices.
func (c *Cache[T]) AddIndexers(indexers Indexers[T]) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := slices.Sorted(maps.Keys(indexers))
	for _, name := range names {
		if _, ok := c.byName[name]; ok {
			return fmt.Errorf("add indexers: %w: %q", ErrIndexConflict, name)
		}
	}
	built := make([]map[string]set, len(names))
	for i, name := range names {
		x := index[T]{name: name, fn: indexers[name]}
		sets, err := x.build(c.items)
		if err != nil {
			return fmt.Errorf("add indexers: %w", err)
		}
		built[i] = sets
	}
	for i, name := range names {
		c.addIndexLocked(name, indexers[name]).sets = built[i]
	}
	return nil
}

// noteVersion records obj's resourceVersion in *rv when T carries one.
func noteVersion[T any](rv *string, obj T) {
	if v, ok := any(obj).(Versioned); ok {
		if s := v.ResourceVersion(); s != "" {
			*rv = s
		}
	}
}
