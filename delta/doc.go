// Package delta is the queue between a list/watch source and a cache: a
// FIFO of per-object change lists (Deltas), with the semantics of
// client-go's DeltaFIFO, generic over the object type.
//
// A producer (the reflector) calls Add, Update and Delete for watch events,
// Replace with each full list and Resync on a timer. A single consumer (the
// informer) calls Pop, applies each key's deltas to its store and hands
// them to event handlers. The store is also the FIFO's KnownObjects: what
// lets Replace emit tombstones for objects deleted while the watch was down,
// and Resync re-emit what the consumer holds.
//
//	q := delta.NewFIFO(store.MetaNamespaceKey[*pod])
//	q.KnownObjects = cache // e.g. an indexer.Cache[*pod]
//	_ = q.Replace(pods, "42")
//	_, err := q.Pop(func(d delta.Deltas[*pod], isInInitialList bool) error {
//		return apply(cache, d) // upsert each object; Deleted: delete by key
//	})
//
// The package Example shows a complete apply function.
//
// # Tombstones
//
// When Replace finds that a key it knew is missing from the new list, it
// queues a Deleted delta whose Tombstone field is set: the deletion happened
// while nobody watched, so the final state is unknown. Delta.Object (equal
// to Tombstone.Obj) is the last known state, possibly stale, and is the
// zero T when no state was known; Tombstone.Key always names the object.
// Consumers that only look at Type == Deleted and delete by key handle both
// kinds alike; those that pass the object on (OnDelete) can tell them apart.
//
// # Pop does not block producers
//
// Upstream, Pop holds the queue lock while the process function runs, so a
// slow handler stalls the reflector. Here the lock is released: producers
// and readers proceed while process runs, and Pops are serialized among
// themselves. The hazard is that the popped deltas are, for that moment,
// neither queued nor in KnownObjects (the consumer has not applied them
// yet), so a Replace or Delete racing the Pop could miss the object. The
// FIFO therefore remembers the deltas in flight and treats them as already
// applied: Replace emits a tombstone for an in-flight key missing from the
// list unless its newest delta is a deletion; Delete of an in-flight key
// counts as a delete of a known object; Resync emits Sync with the in-flight
// object, never the stale one KnownObjects may still hold. The outcome is
// what upstream would produce had the Pop finished first.
//
// # Requeue
//
// A process function may return an error wrapping ErrRequeue to have its
// deltas put back, in front of any deltas that arrived for the key in the
// meantime (a tombstone from a racing Replace, say). Upstream removed this
// option; its older form silently dropped the requeued deltas when newer
// ones had arrived.
//
// # Ordering: DeltaFIFO, not RealFIFO
//
// Since 1.36 upstream informers default to RealFIFO, which keeps every event
// as its own entry in arrival order and applies a relist to the cache in one
// step. This FIFO keeps DeltaFIFO's model: deltas are grouped per key, keys
// are popped in the order they were first queued, so events for different
// keys can reach handlers out of their arrival order (an object updated
// after another is reported first if it was already queued), and a relist
// reaches the cache one key at a time, readers seeing a mix of old and new
// state until the last Replaced delta is popped. Grouping is what bounds the
// queue by the number of objects rather than events.
package delta
