// Package indexer adds secondary indices to a store.Store: a Cache files
// each object under the values its index functions return, so "all pods on
// node X" or "everything owned by UID Y" is one map lookup.
//
// An IndexFunc may return several values (every owner UID) or none (no such
// label). The indices are the store's store.Index: objects and index entries
// change together under the store's lock, so a reader never sees an object
// without its index entries or the reverse. When an object changes or
// leaves, its old entries go, and a value whose set becomes empty is
// forgotten, so a long-running cache does not grow with churn. While every
// object has one and the same value under an index (an informer of one
// namespace under Namespace, or of a cluster-scoped resource), the index
// keeps no copy of the store's keys and answers from the store itself.
//
// Index functions must be pure: the indexer recomputes them on the stored
// object to find the entries to remove, instead of remembering each object's
// values. If an index function fails, the write that called it returns the
// error and changes nothing (upstream client-go panics instead).
//
//	idx := indexer.New(store.MetaNamespaceKey[*pod], indexer.Indexers[*pod]{
//		indexer.Namespace: indexer.NamespaceIndex[*pod],
//	})
//	_ = idx.Add(p)
//	inDefault, err := idx.ByIndex(indexer.Namespace, "default")
package indexer
