// Package store holds keyed, thread-safe, in-memory collections of objects of
// any type T.
//
// A Store files each object under the string its KeyFunc returns, usually
// MetaNamespaceKey ("namespace/name", or "name" for a cluster-scoped object).
// Objects are treated as immutable: the store hands out the values it holds
// without copying them, so a caller must never modify an object it got from a
// store or gave to one. That is what makes reads cheap.
//
// Cache is the implementation; package indexer adds secondary indices on top
// of the same contract.
//
//	c := store.New(store.MetaNamespaceKey[*httpwatch.Object])
//	_ = c.Add(pod)
//	p, ok, _ := c.GetByKey("default/web-0")
package store
