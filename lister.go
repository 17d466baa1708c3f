package listwatch

import (
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/selector"
)

// Lister reads an informer's cache: by label selector, by name, by
// namespace. What it returns is shared with the cache; objects are immutable.
type Lister struct {
	cache     *indexer.Cache[*Object]
	namespace string // "" reads every namespace
}

// List returns the cached objects matching a label selector in the full
// Kubernetes syntax ("" matches everything).
func (l *Lister) List(labelSelector string) ([]*Object, error) {
	sel, err := selector.Parse(labelSelector)
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	var all []*Object
	if l.namespace == "" {
		all = l.cache.List()
	} else if all, err = l.cache.ByIndex(indexer.Namespace, l.namespace); err != nil {
		return nil, fmt.Errorf("list namespace %q: %w", l.namespace, err)
	}
	if sel.Empty() {
		return all, nil
	}
	out := all[:0:0]
	for _, o := range all {
		if sel.Matches(labels{o}) {
			out = append(out, o)
		}
	}
	return out, nil
}

// Get returns the cached object with the given name. namespace is ignored
// by a Lister from ByNamespace, and empty for cluster-scoped objects. A
// missing object is a *httpwatch.StatusError for which httpwatch.IsNotFound
// reports true.
func (l *Lister) Get(namespace, name string) (*Object, error) {
	if l.namespace != "" {
		namespace = l.namespace
	}
	key := indexer.JoinKey(namespace, name)
	o, ok, err := l.cache.GetByKey(key)
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", key, err)
	}
	if !ok {
		return nil, &httpwatch.StatusError{Code: 404, Reason: "NotFound", Message: fmt.Sprintf("%q not found in cache", key)}
	}
	return o, nil
}

// ByNamespace returns a Lister of one namespace, served by the namespace
// index.
func (l *Lister) ByNamespace(namespace string) *Lister {
	return &Lister{cache: l.cache, namespace: namespace}
}

// labels lets a selector read an object's labels without building a map.
type labels struct{ o *Object }

func (l labels) Get(key string) (string, bool) { return l.o.Label(key) }
