package store

import (
	"errors"
	"fmt"
	"sync"
)

// Store is a keyed collection of objects. Add and Update are the same
// operation (an upsert); deleting an absent object is not an error.
type Store[T any] interface {
	Add(obj T) error
	Update(obj T) error
	Delete(obj T) error
	Get(obj T) (item T, exists bool, err error)
	GetByKey(key string) (item T, exists bool, err error)
	// List and ListKeys return fresh slices, in no particular order.
	List() []T
	ListKeys() []string
	// Replace swaps the whole content for items, in one step, and records
	// resourceVersion as the version the content is at.
	Replace(items []T, resourceVersion string) error
	// Resync exists for queues that emit periodic Sync deltas; a plain
	// store has nothing to do.
	Resync() error
	// LastResourceVersion is the version given to the last Replace, or of
	// the last object written or deleted if T has a ResourceVersion method,
	// whichever came last; "" before either.
	LastResourceVersion() string
}

// Versioned objects report the resourceVersion they were read at;
// LastResourceVersion follows the objects written when T is Versioned.
type Versioned interface {
	ResourceVersion() string
}

// Cache is the Store implementation: a map under a sync.RWMutex. Reads take
// the read lock only and never copy objects. The zero value is not usable;
// call New.
type Cache[T any] struct {
	// Transform, if set, rewrites every object on its way in through Add,
	// Update or Replace (not Delete), e.g. to drop fields nobody reads.
	// Set it before first use; an error aborts the write.
	Transform func(T) (T, error)

	key   KeyFunc[T]
	mu    sync.RWMutex
	items map[string]T
	rv    string
}

var _ Store[Named] = (*Cache[Named])(nil)

// New returns an empty Cache filing objects under key(obj).
func New[T any](key KeyFunc[T]) *Cache[T] {
	return &Cache[T]{key: orMissing(key), items: make(map[string]T)}
}

// ErrNoKeyFunc is returned by every write to a store built with a nil
// KeyFunc.
var ErrNoKeyFunc = errors.New("no key function")

// orMissing turns a nil key function into one that reports the mistake on
// every call, rather than a nil-func panic deep inside a write.
func orMissing[T any](key KeyFunc[T]) KeyFunc[T] {
	if key != nil {
		return key
	}
	return func(T) (string, error) { return "", ErrNoKeyFunc }
}

// Add stores obj, replacing any object with the same key.
func (c *Cache[T]) Add(obj T) error { return c.put("add", obj) }

// Update is Add.
func (c *Cache[T]) Update(obj T) error { return c.put("update", obj) }

func (c *Cache[T]) put(op string, obj T) error {
	key, err := c.key(obj)
	if err != nil {
		return fmt.Errorf("store %s: %w", op, err)
	}
	if c.Transform != nil {
		if obj, err = c.Transform(obj); err != nil {
			return fmt.Errorf("store %s %q: transform: %w", op, key, err)
		}
	}
	c.mu.Lock()
	c.items[key] = obj
	noteVersion(&c.rv, obj)
	c.mu.Unlock()
	return nil
}

// Delete removes the object with obj's key, if there is one.
func (c *Cache[T]) Delete(obj T) error {
	key, err := c.key(obj)
	if err != nil {
		return fmt.Errorf("store delete: %w", err)
	}
	c.mu.Lock()
	delete(c.items, key)
	noteVersion(&c.rv, obj)
	c.mu.Unlock()
	return nil
}

// Get returns the stored object with obj's key.
func (c *Cache[T]) Get(obj T) (T, bool, error) {
	key, err := c.key(obj)
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("store get: %w", err)
	}
	return c.GetByKey(key)
}

// GetByKey returns the object filed under key. The error is always nil; it
// is there to satisfy interfaces shared with stores that can fail.
func (c *Cache[T]) GetByKey(key string) (T, bool, error) {
	c.mu.RLock()
	obj, ok := c.items[key]
	c.mu.RUnlock()
	return obj, ok, nil
}

// List returns every stored object.
func (c *Cache[T]) List() []T {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]T, 0, len(c.items))
	for _, obj := range c.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every key.
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

// Replace makes items the whole content. Keys and transforms are computed
// before anything changes, so on error the store is left as it was.
func (c *Cache[T]) Replace(items []T, resourceVersion string) error {
	next := make(map[string]T, len(items))
	for _, obj := range items {
		key, err := c.key(obj)
		if err != nil {
			return fmt.Errorf("store replace: %w", err)
		}
		if c.Transform != nil {
			if obj, err = c.Transform(obj); err != nil {
				return fmt.Errorf("store replace %q: transform: %w", key, err)
			}
		}
		next[key] = obj
	}
	c.mu.Lock()
	c.items = next
	c.rv = resourceVersion
	c.mu.Unlock()
	return nil
}

// Resync does nothing.
func (c *Cache[T]) Resync() error { return nil }

// LastResourceVersion implements Store.
func (c *Cache[T]) LastResourceVersion() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rv
}

// noteVersion records obj's resourceVersion in *rv when T carries one.
func noteVersion[T any](rv *string, obj T) {
	if v, ok := any(obj).(Versioned); ok {
		if s := v.ResourceVersion(); s != "" {
			*rv = s
		}
	}
}
