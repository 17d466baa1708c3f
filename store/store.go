package store

import (
	"fmt"
	"sync"
)

// Store is a thread-safe collection of objects filed under the key its
// KeyFunc computes. Reads share a sync.RWMutex and hand out the stored
// objects without copying them: treat them as immutable. The zero value is
// not usable; call New.
type Store[T any] struct {
	key   KeyFunc[T]
	mu    sync.RWMutex
	items map[string]T
	index Index[T] // may be nil
}

// Index is kept in step with a Store's writes, under the store's lock, so
// that a reader never sees an object without its entries or the reverse.
// Package indexer's indices are one. A method that fails must change
// nothing: the write then fails too, and the store is left as it was.
type Index[T any] interface {
	// Put is called before obj is filed under key; old is the object it
	// replaces, if replacing.
	Put(key string, obj, old T, replacing bool) error
	// Remove is called before old, filed under key, is removed.
	Remove(key string, old T) error
}

// New returns an empty Store filing objects under key(obj). A nil key
// makes every write fail with ErrNoKeyFunc.
func New[T any](key KeyFunc[T]) *Store[T] { return NewIndexed(key, nil) }

// NewIndexed is New with an Index kept in step with the objects.
func NewIndexed[T any](key KeyFunc[T], index Index[T]) *Store[T] {
	if key == nil {
		key = func(T) (string, error) { return "", ErrNoKeyFunc }
	}
	return &Store[T]{key: key, items: make(map[string]T), index: index}
}

// Add stores obj, replacing any object with the same key.
func (s *Store[T]) Add(obj T) error { return s.put("add", obj) }

// Update is Add.
func (s *Store[T]) Update(obj T) error { return s.put("update", obj) }

func (s *Store[T]) put(op string, obj T) error {
	_, _, err := s.swap(op, obj)
	return err
}

// Swap stores obj like Add and returns the object it replaced, if any: a
// Get and an Update in one step, keying obj once. On error nothing changes.
func (s *Store[T]) Swap(obj T) (previous T, loaded bool, err error) {
	return s.swap("swap", obj)
}

func (s *Store[T]) swap(op string, obj T) (old T, had bool, err error) {
	key, err := s.key(obj)
	if err != nil {
		return old, false, fmt.Errorf("store %s: %w", op, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had = s.items[key]
	if s.index != nil {
		if err := s.index.Put(key, obj, old, had); err != nil {
			var zero T
			return zero, false, fmt.Errorf("store %s %q: %w", op, key, err)
		}
	}
	s.items[key] = obj
	return old, had, nil
}

// Delete removes the object with obj's key. Deleting an absent key does
// nothing.
func (s *Store[T]) Delete(obj T) error {
	key, err := s.key(obj)
	if err != nil {
		return fmt.Errorf("store delete: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old, had := s.items[key]
	if !had {
		return nil
	}
	if s.index != nil {
		if err := s.index.Remove(key, old); err != nil {
			return fmt.Errorf("store delete %q: %w", key, err)
		}
	}
	delete(s.items, key)
	return nil
}

// Get returns the stored object with obj's key.
func (s *Store[T]) Get(obj T) (T, bool, error) {
	key, err := s.key(obj)
	if err != nil {
		var zero T
		return zero, false, fmt.Errorf("store get: %w", err)
	}
	return s.GetByKey(key)
}

// GetByKey returns the object filed under key. The error is always nil.
func (s *Store[T]) GetByKey(key string) (T, bool, error) {
	s.mu.RLock()
	obj, ok := s.items[key]
	s.mu.RUnlock()
	return obj, ok, nil
}

// List returns every stored object, in no particular order.
func (s *Store[T]) List() []T {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]T, 0, len(s.items))
	for _, obj := range s.items {
		out = append(out, obj)
	}
	return out
}

// ListKeys returns every key, in no particular order.
func (s *Store[T]) ListKeys() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.items))
	for key := range s.items {
		out = append(out, key)
	}
	return out
}

// Len is the number of stored objects.
func (s *Store[T]) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.items)
}

// View calls fn under the read lock with the stored objects, by key, for
// an Index's reads: its entries and the objects they name are one state
// while fn runs. fn must not modify items nor call the store.
func (s *Store[T]) View(fn func(items map[string]T)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	fn(s.items)
}

// Reindex calls fn under the write lock with the stored objects, by key,
// for the Index to change its entries without a write (to add an index
// over what is stored). fn must not modify items nor call the store.
func (s *Store[T]) Reindex(fn func(items map[string]T) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fn(s.items)
}
