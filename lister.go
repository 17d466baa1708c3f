package listwatch

import (
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/selector"
	"github.com/listwatch/listwatch/store"
)

// Lister reads an informer's cache across all namespaces: by label
// selector, by key. What it returns is shared with the cache; objects are
// immutable.
type Lister struct {
	cache *indexer.Cache[*Object]
}

// List returns the cached objects matching a label selector in the full
// Kubernetes syntax ("" matches everything). A caller listing often with
// one selector parses it once and calls Select.
func (l *Lister) List(labelSelector string) ([]*Object, error) {
	sel, err := selector.Parse(labelSelector)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	return l.Select(sel), nil
}

// Select returns the cached objects sel matches.
func (l *Lister) Select(sel selector.Selector) []*Object {
	return filter(l.cache.List(), sel)
}

// Get returns the cached object with the given namespace ("" for a
// cluster-scoped object) and name. A missing object is a
// *httpwatch.StatusError for which httpwatch.IsNotFound reports true.
func (l *Lister) Get(namespace, name string) (*Object, error) {
	return get(l.cache, namespace, name)
}

// ByNamespace returns a Lister of one namespace, served by the namespace
// index.
func (l *Lister) ByNamespace(namespace string) *NamespaceLister {
	return &NamespaceLister{cache: l.cache, namespace: namespace}
}

// NamespaceLister reads the objects of one namespace from an informer's
// cache.
type NamespaceLister struct {
	cache     *indexer.Cache[*Object]
	namespace string
}

// List returns the namespace's cached objects matching a label selector
// ("" matches everything).
func (l *NamespaceLister) List(labelSelector string) ([]*Object, error) {
	sel, err := selector.Parse(labelSelector)
	if err != nil {
		return nil, fmt.Errorf("list namespace %q: %w", l.namespace, err)
	}
	return l.Select(sel), nil
}

// Select returns the namespace's cached objects sel matches. Like
// Lister.Select it cannot fail: an informer's cache always has the
// namespace index.
func (l *NamespaceLister) Select(sel selector.Selector) []*Object {
	all, err := l.cache.ByIndex(indexer.Namespace, l.namespace)
	if err != nil {
		panic(fmt.Sprintf("listwatch: the informer's cache has no namespace index: %v", err))
	}
	return filter(all, sel)
}

// Get returns the namespace's cached object of that name; see Lister.Get.
func (l *NamespaceLister) Get(name string) (*Object, error) {
	return get(l.cache, l.namespace, name)
}

func get(cache *indexer.Cache[*Object], namespace, name string) (*Object, error) {
	key := store.JoinKey(namespace, name)
	o, ok, err := cache.GetByKey(key)
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	if !ok {
		return nil, &httpwatch.StatusError{Code: 404, Reason: "NotFound", Message: fmt.Sprintf("%q not found in cache", key)}
	}
	return o, nil
}

// filter keeps the objects sel matches, in a new slice unless sel matches
// everything.
func filter(all []*Object, sel selector.Selector) []*Object {
	if sel.Empty() {
		return all
	}
	out := all[:0:0]
	for _, o := range all {
		if sel.Matches(labels{o}) {
			out = append(out, o)
		}
	}
	return out
}

// labels lets a selector read an object's labels without building a map.
type labels struct{ o *Object }

func (l labels) Get(key string) (string, bool) { return l.o.Label(key) }
