package indexer

import "fmt"

// index is one named index: value -> keys of the objects having it.
type index[T any] struct {
	name string
	fn   IndexFunc[T]
	sets map[string]set
}

// set holds the keys under one index value. Most sets (an owner UID, a
// label value seen once) hold a single key, so that key lives inline and a
// map is made only from the second key on. A set present in index.sets is
// never empty: the last removal deletes it.
type set struct {
	one  string // the only key while many is nil
	many map[string]struct{}
}

// len and each are for sets found in index.sets; the zero set is not empty.
func (s set) len() int {
	if s.many != nil {
		return len(s.many)
	}
	return 1
}

func (s set) each(fn func(key string)) {
	if s.many == nil {
		fn(s.one)
		return
	}
	for key := range s.many {
		fn(key)
	}
}

func (x *index[T]) add(key string, values []string) {
	for _, v := range values {
		x.addOne(key, v)
	}
}

func (x *index[T]) addOne(key, value string) {
	s, ok := x.sets[value]
	switch {
	case !ok:
		x.sets[value] = set{one: key}
	case s.many != nil:
		s.many[key] = struct{}{}
	case s.one != key:
		x.sets[value] = set{many: map[string]struct{}{s.one: {}, key: {}}}
	}
}

func (x *index[T]) remove(key string, values []string) {
	for _, v := range values {
		x.removeOne(key, v)
	}
}

func (x *index[T]) removeOne(key, value string) {
	s, ok := x.sets[value]
	switch {
	case !ok:
	case s.many == nil:
		if s.one == key {
			delete(x.sets, value)
		}
	default:
		delete(s.many, key)
		// Fold back to the inline form so a set that shrank to one key
		// frees its map.
		if len(s.many) == 1 {
			for k := range s.many {
				x.sets[value] = set{one: k}
			}
		}
	}
}

// move re-files key from the prev values to next, touching only the values
// that differ: an update that keeps its namespace costs no map writes.
func (x *index[T]) move(key string, prev, next []string) {
	for _, v := range prev {
		if !contains(next, v) {
			x.removeOne(key, v)
		}
	}
	for _, v := range next {
		if !contains(prev, v) {
			x.addOne(key, v)
		}
	}
}

func contains(values []string, v string) bool {
	for _, w := range values {
		if w == v {
			return true
		}
	}
	return false
}

// build indexes items from scratch.
func (x *index[T]) build(items map[string]T) (map[string]set, error) {
	built := index[T]{fn: x.fn, sets: make(map[string]set)}
	for key, obj := range items {
		values, err := x.fn(obj)
		if err != nil {
			return nil, fmt.Errorf("index %q of %q: %w", x.name, key, err)
		}
		built.add(key, values)
	}
	return built.sets, nil
}
