// Package indexer is the cache of an informer: a thread-safe, keyed,
// in-memory collection of objects of any type T with secondary indices.
//
// Each object is filed under the string its KeyFunc returns, usually
// MetaNamespaceKey ("namespace/name", or "name" for a cluster-scoped
// object), and under the values its index functions return, so "all pods on
// node X" or "everything owned by UID Y" is one map lookup. Objects are
// treated as immutable: the cache hands out the values it holds without
// copying them, so a caller must never modify an object it got from the
// cache or gave to it. That is what makes reads cheap.
//
// An IndexFunc may return several values (every owner UID) or none (no such
// label). Items and indices change together under one lock, so a reader never
// sees an object without its index entries or the reverse. When an object
// changes or leaves, its old entries go, and a value whose set becomes empty
// is forgotten, so a long-running cache does not grow with churn.
//
// Index functions must be pure: the indexer recomputes them on the stored
// object to find the entries to remove, instead of remembering each object's
// values. If an index function fails, the write that called it returns the
// error and changes nothing (upstream client-go panics instead).
//
//	idx := indexer.New(indexer.MetaNamespaceKey[*pod], indexer.Indexers[*pod]{
//		indexer.Namespace: indexer.NamespaceIndex[*pod],
//	})
//	_ = idx.Add(p)
//	inDefault, err := idx.ByIndex(indexer.Namespace, "default")
package indexer
