package indexer

import "fmt"

// index is one named index: value -> keys of the objects having it.
//
// While every stored object has one and the same value (an informer of
// one namespace under the namespace index, a cluster-scoped resource, a
// label every object carries), that value's set would be a second map of
// every key in the store: 44 bytes an object. The index is then uniform:
// it keeps no sets and answers from the store's own keys, until an object
// with other values arrives and the set is built once.
type index[T any] struct {
	name string
	fn   IndexFunc[T]
	sets map[string]set
	// uniform: sets is empty, and every stored object's values are
	// exactly [only] (only is unset while the store is empty).
	uniform bool
	only    string
}

func newIndex[T any](name string, fn IndexFunc[T]) *index[T] {
	return &index[T]{name: name, fn: fn, sets: make(map[string]set), uniform: true}
}

// put files a new key under values; items are the stored objects, which
// do not hold key yet.
func (x *index[T]) put(items map[string]T, key string, values []string) {
	if len(items) == 0 {
		x.uniform = true // nothing is filed: sets is empty
		if len(values) == 1 {
			x.only = values[0]
			return
		}
	}
	if x.uniform && single(values, x.only) {
		return
	}
	x.explicit(items)
	x.add(key, values)
}

// replace re-files a stored key from prev to next.
func (x *index[T]) replace(items map[string]T, key string, prev, next []string) {
	if x.uniform && single(next, x.only) {
		return
	}
	x.explicit(items)
	x.move(key, prev, next)
}

// explicit ends the uniform form, filing every stored key under the one
// value they share.
func (x *index[T]) explicit(items map[string]T) {
	if !x.uniform {
		return
	}
	x.uniform = false
	for key := range items {
		x.addOne(key, x.only)
	}
}

func single(values []string, v string) bool { return len(values) == 1 && values[0] == v }

// size is how many keys are filed under value.
func (x *index[T]) size(items map[string]T, value string) int {
	if x.uniform {
		if value == x.only {
			return len(items)
		}
		return 0
	}
	if s, ok := x.sets[value]; ok {
		return s.len()
	}
	return 0
}

// each calls fn with every key filed under value.
func (x *index[T]) each(items map[string]T, value string, fn func(key string)) {
	if x.uniform {
		if value == x.only {
			for key := range items {
				fn(key)
			}
		}
		return
	}
	if s, ok := x.sets[value]; ok {
		s.each(fn)
	}
}

// values are the values with keys filed under them.
func (x *index[T]) values(items map[string]T) []string {
	if x.uniform {
		if len(items) == 0 {
			return []string{}
		}
		return []string{x.only}
	}
	out := make([]string, 0, len(x.sets))
	for v := range x.sets {
		out = append(out, v)
	}
	return out
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

// build indexes items from scratch, uniform if they allow it.
func build[T any](name string, fn IndexFunc[T], items map[string]T) (*index[T], error) {
	x := newIndex(name, fn)
	x.uniform = false
	same := true
	for key, obj := range items {
		values, err := fn(obj)
		if err != nil {
			return nil, fmt.Errorf("index %q of %q: %w", name, key, err)
		}
		if same && (len(values) != 1 || len(x.sets) > 0 && !single(values, x.only)) {
			same = false
		}
		if len(values) == 1 {
			x.only = values[0]
		}
		x.add(key, values)
	}
	if same {
		x.sets, x.uniform = make(map[string]set), true
	}
	return x, nil
}
