// Package store is the keyed, thread-safe, in-memory collection at the end
// of an informer's pipeline, and the key functions that name its objects.
//
// A Store files each object of any type T under the string its KeyFunc
// returns, usually MetaNamespaceKey ("namespace/name", or "name" for a
// cluster-scoped object); JoinKey builds such a key and SplitKey takes it
// apart. Objects are treated as immutable: the store hands out the values
// it holds without copying them, so a caller must never modify an object it
// got from the store or gave to it. That is what makes reads cheap.
//
//	s := store.New(store.MetaNamespaceKey[*raw.Object])
//	_ = s.Add(pod)
//	p, ok, _ := s.GetByKey(store.JoinKey("default", "web"))
//
// Package delta keys its queue with the same functions; package indexer
// adds secondary indices to a Store (an Index it keeps in step under the
// store's lock).
package store
