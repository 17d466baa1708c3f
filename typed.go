package listwatch

import (
	"sync"

	"github.com/listwatch/listwatch/indexer"
)

// TypedLister reads an informer's cache as values of T, a struct of the
// program's own or a k8s.io/api type, decoding each object once per
// resourceVersion (decision 42): reading an object again at the version
// already decoded returns the value decoded then, whichever goroutine
// asks. The values are shared by every reader, as the cached objects are:
// treat them as read-only, and copy one to change it.
//
// Memory: one decoded value per object read, for the objects the cache
// holds; values of objects deleted or changed since are dropped when the
// decoded values outnumber the cache's objects twice over, so the
// TypedLister never holds more than about twice what the cache holds. A
// program makes one TypedLister per informer and type and shares it, as
// it shares the informer.
type TypedLister[T any] struct {
	cache *indexer.Cache[*Object]

	mu      sync.Mutex
	decoded map[string]*decodedValue[T] // by key
}

// decodedValue is one object's value at one resourceVersion, decoded once.
type decodedValue[T any] struct {
	rv   string
	once sync.Once
	v    *T
	err  error
}

// Typed returns a TypedLister of inf's cache decoding objects as T.
func Typed[T any](inf *Informer) *TypedLister[T] {
	return &TypedLister[T]{cache: inf.indexer, decoded: map[string]*decodedValue[T]{}}
}

// Get returns the cached object of namespace ("" for a cluster-scoped
// object) and name as a T. A missing object is a *httpwatch.StatusError
// for which httpwatch.IsNotFound reports true; an object that does not
// decode as T is the decoding error, every time it is read at that
// version.
func (l *TypedLister[T]) Get(namespace, name string) (*T, error) {
	o, err := get(l.cache, namespace, name)
	if err != nil {
		return nil, err
	}
	return l.Decode(o)
}

// List returns the cached objects matching a label selector ("" matches
// everything) as values of T. It stops at the first object that does not
// decode as T, and returns that error.
func (l *TypedLister[T]) List(labelSelector string) ([]*T, error) {
	objs, err := (&Lister{cache: l.cache}).List(labelSelector)
	if err != nil {
		return nil, err
	}
	out := make([]*T, 0, len(objs))
	for _, o := range objs {
		v, err := l.Decode(o)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Decode returns o, an object of the informer's (one a handler was given,
// say), as a T: the value already decoded at o's resourceVersion if there
// is one, else decoded now and kept.
func (l *TypedLister[T]) Decode(o *Object) (*T, error) {
	key, rv := Key(o), o.ResourceVersion()
	l.mu.Lock()
	d, ok := l.decoded[key]
	if !ok || d.rv != rv {
		d = &decodedValue[T]{rv: rv}
		l.decoded[key] = d
		l.sweepLocked()
	}
	l.mu.Unlock()
	// Outside the lock: readers of other objects do not wait for this
	// decoding, and readers of this one wait for it rather than repeat it.
	d.once.Do(func() {
		v := new(T)
		if d.err = o.Decode(v); d.err == nil {
			d.v = v
		}
	})
	return d.v, d.err
}

// sweepLocked drops the values of objects no longer cached at the version
// decoded, once the values outnumber the cache's objects twice over (and
// a minimum, so that a small cache is not swept at every read): amortised,
// each read pays for a constant share of a sweep. l.mu is held.
func (l *TypedLister[T]) sweepLocked() {
	if len(l.decoded) <= 2*l.cache.Len()+minDecoded {
		return
	}
	for key, d := range l.decoded {
		o, ok, err := l.cache.GetByKey(key)
		if err != nil || !ok || o.ResourceVersion() != d.rv {
			delete(l.decoded, key)
		}
	}
}

// minDecoded is how many values a TypedLister keeps beyond twice the
// cache's size before it sweeps.
const minDecoded = 64
