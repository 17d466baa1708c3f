package delta

import (
	"errors"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/store"
)

var (
	// ErrClosed is returned by Pop once the FIFO is closed and drained.
	ErrClosed = errors.New("delta fifo closed")
	// ErrRequeue, wrapped in the error a Pop process function returns,
	// asks for the popped deltas to be put back (see Pop).
	ErrRequeue = errors.New("requeue")
)

// KnownObjects is the consumer's view of what it has already applied: the
// objects popped and stored so far. A store.Store (so an indexer.Cache)
// satisfies it.
type KnownObjects[T any] interface {
	ListKeys() []string
	GetByKey(key string) (T, bool, error)
}

// FIFO queues deltas per key: each key waits in the queue once, however many
// deltas accumulate for it, and Pop hands over all of a key's deltas
// together, oldest first. Keys come out in the order they first entered
// the queue.
//
// Producers (Add, Update, Delete, Replace, Resync) and readers never wait
// for a Pop process function to finish; Pops run one at a time. Set the
// exported fields before first use. The zero value is not usable; call
// NewFIFO.
type FIFO[T any] struct {
	// KnownObjects, if set, is what Delete, Replace and Resync consult about
	// objects already popped. Without it Delete of an unqueued key is
	// dropped, Replace emits tombstones only for queued keys, and Resync
	// does nothing.
	KnownObjects KnownObjects[T]
	// EmitDeltaTypeReplaced makes Replace emit Replaced deltas (the
	// default); false emits Sync, as very old client-go did.
	EmitDeltaTypeReplaced bool
	// WakeOnFlush makes writes leave a Pop that waits for an empty queue
	// asleep until Flush (or Close). A producer that writes in batches
	// (a reflector reading a watch) flushes after each, so the consumer's
	// goroutine is woken once per batch, not once per write: each wake-up
	// of a parked goroutine may cost a thread wake-up in the kernel. The
	// producer must flush before it waits, or the queued keys wait too.
	WakeOnFlush bool

	key   store.KeyFunc[T]
	popMu sync.Mutex // one Pop at a time
	mu    sync.Mutex
	cond  sync.Cond // signalled when the queue gains a key or closes

	items map[string]Deltas[T] // never holds an empty Deltas
	queue keyQueue             // keys of items, each once, in order
	peak  int                  // most keys items held since it was last made

	// The deltas of the Pop in progress, not yet applied by the consumer.
	// Producers treat them as applied; see the package doc.
	inflightKey string
	inflight    Deltas[T]

	populated bool // any write happened
	initial   int  // pops left of the first Replace's keys
	done      chan struct{}
	synced    bool // done is closed
	closed    bool
}

// NewFIFO returns an empty FIFO filing objects under key(obj).
func NewFIFO[T any](key store.KeyFunc[T]) *FIFO[T] {
	if key == nil {
		key = func(T) (string, error) { return "", store.ErrNoKeyFunc }
	}
	f := &FIFO[T]{
		EmitDeltaTypeReplaced: true,
		key:                   key,
		items:                 make(map[string]Deltas[T]),
		done:                  make(chan struct{}),
	}
	f.cond.L = &f.mu
	return f
}

// Add queues an Added delta.
func (f *FIFO[T]) Add(obj T) error { return f.push("add", Added, obj) }

// Update queues an Updated delta.
func (f *FIFO[T]) Update(obj T) error { return f.push("update", Updated, obj) }

// Delete queues a Deleted delta, unless the key is neither queued nor
// known (KnownObjects, or the Pop in progress): then the deletion was
// already reported, typically by a relist's tombstone, and is dropped.
func (f *FIFO[T]) Delete(obj T) error { return f.push("delete", Deleted, obj) }

func (f *FIFO[T]) push(op string, t DeltaType, obj T) error {
	key, err := f.keyOf(op, obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populateLocked()
	if t == Deleted && len(f.items[key]) == 0 && !f.knownLocked(key) {
		return nil
	}
	f.appendLocked(key, Delta[T]{Type: t, Object: obj})
	return nil
}

// keyOf keys obj for op, outside the lock.
func (f *FIFO[T]) keyOf(op string, obj T) (string, error) {
	key, err := f.key(obj)
	if err != nil {
		return "", fmt.Errorf("delta fifo %s: %w", op, err)
	}
	return key, nil
}

// knownLocked says whether the consumer has key, counting the Pop in
// progress as already applied.
func (f *FIFO[T]) knownLocked(key string) bool {
	if f.KnownObjects == nil {
		return false
	}
	if f.inflight != nil && key == f.inflightKey {
		return f.inflight.Newest().Type != Deleted
	}
	_, exists, err := f.KnownObjects.GetByKey(key)
	// A failed lookup might hide an object: report the deletion.
	return exists || err != nil
}

// shrinkAfter is the number of keys above which a drained FIFO drops its map
// for a fresh one; below it, keeping the map saves steady-state allocations.
const shrinkAfter = 1024

func (f *FIFO[T]) appendLocked(key string, d Delta[T]) {
	ds, queued := f.items[key]
	f.items[key] = appendDeduped(ds, d)
	if !queued {
		f.queue.push(key)
		if !f.WakeOnFlush {
			f.cond.Signal()
		}
		f.peak = max(f.peak, len(f.items))
	}
}

func (f *FIFO[T]) populateLocked() {
	if !f.populated {
		f.populated = true
		f.checkSyncedLocked()
	}
}

func (f *FIFO[T]) checkSyncedLocked() {
	if !f.synced && f.populated && f.initial == 0 {
		f.synced = true
		close(f.done)
	}
}

// Replace takes list as the complete current state, as from a relist. Each
// listed object gets a Replaced delta (Sync if EmitDeltaTypeReplaced is
// false). Each key known before and missing from list gets a tombstone
// (a Deleted delta with DeletedFinalStateUnknown) carrying its last known
// state: first keys still queued (their newest object), then keys only
// KnownObjects has (its object, or zero if the lookup fails). The Pop in
// progress counts as applied. resourceVersion is not used.
//
// Keys are computed first: on error nothing is queued.
func (f *FIFO[T]) Replace(list []T, _ string) error {
	keys := make([]string, len(list))
	for i, obj := range list {
		var err error
		if keys[i], err = f.keyOf("replace", obj); err != nil {
			return err
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	action := Sync
	if f.EmitDeltaTypeReplaced {
		action = Replaced
	}
	// A listed key's deltas grow by one Replaced (or Sync) delta, which is
	// never collapsed: a key queued before whose deltas did not grow is
	// one the list no longer holds. Only queued keys are remembered, so a
	// relist with an empty queue builds no set of what it listed.
	queued := make(map[string]int, len(f.items))
	for key, ds := range f.items {
		queued[key] = len(ds)
	}
	for i, key := range keys {
		f.appendLocked(key, Delta[T]{Type: action, Object: list[i]})
	}
	for key, n := range queued {
		if ds := f.items[key]; len(ds) == n {
			f.appendLocked(key, tombstone(key, ds.Newest().Object))
		}
	}
	// From here on a key with nothing queued was not listed.
	if f.inflight != nil {
		key := f.inflightKey
		if newest := f.inflight.Newest(); len(f.items[key]) == 0 && newest.Type != Deleted {
			f.appendLocked(key, tombstone(key, newest.Object))
		}
	}
	if f.KnownObjects != nil {
		for _, key := range f.KnownObjects.ListKeys() {
			if len(f.items[key]) > 0 || (f.inflight != nil && key == f.inflightKey) {
				continue
			}
			obj, exists, err := f.KnownObjects.GetByKey(key)
			if err != nil || !exists {
				var zero T
				obj = zero
			}
			f.appendLocked(key, tombstone(key, obj))
		}
	}
	if !f.populated {
		f.populated = true
		// Only the first Replace counts, and before it nothing was
		// queued: the queue is exactly its keys and tombstones.
		f.initial = f.queue.len()
		f.checkSyncedLocked()
	}
	return nil
}

// Resync queues a Sync delta, with the object KnownObjects holds, for every
// known key that has nothing queued; queued keys are skipped because their
// known object may be older than what is queued. The Pop in progress counts
// as applied. Without KnownObjects it does nothing. Failed lookups are
// skipped and reported together.
func (f *FIFO[T]) Resync() error {
	if f.KnownObjects == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for _, key := range f.KnownObjects.ListKeys() {
		if len(f.items[key]) > 0 || (f.inflight != nil && key == f.inflightKey) {
			continue
		}
		obj, exists, err := f.KnownObjects.GetByKey(key)
		if err != nil {
			errs = append(errs, fmt.Errorf("delta fifo resync %q: %w", key, err))
			continue
		}
		if exists {
			f.appendLocked(key, Delta[T]{Type: Sync, Object: obj})
		}
	}
	if f.inflight != nil {
		key := f.inflightKey
		if newest := f.inflight.Newest(); len(f.items[key]) == 0 && newest.Type != Deleted {
			f.appendLocked(key, Delta[T]{Type: Sync, Object: newest.Object})
		}
	}
	return errors.Join(errs...)
}

// Pop waits for a queued key, removes it with its deltas and calls
// process(deltas, isInInitialList), where isInInitialList is !HasSynced()
// before the pop. It returns the deltas and process's error. Once the FIFO
// is closed and empty it returns ErrClosed.
//
// The queue lock is not held while process runs. If process's error wraps
// ErrRequeue, the deltas go back into the queue ahead of any deltas that
// arrived for the key meanwhile; the key keeps its queue position if it
// has one again, else it goes to the back, so one failing object cannot
// starve the others. A process that panics loses its deltas.
//
// Pops run one at a time; a second Pop waits for the first to return.
// process may be nil. It must not modify the deltas: the FIFO reads them
// until process returns, to answer racing producers.
func (f *FIFO[T]) Pop(process func(d Deltas[T], isInInitialList bool) error) (Deltas[T], error) {
	f.popMu.Lock()
	defer f.popMu.Unlock()
	f.mu.Lock()
	for f.queue.len() == 0 {
		if f.closed {
			f.mu.Unlock()
			return nil, ErrClosed
		}
		f.cond.Wait()
	}
	initial := !f.syncedLocked()
	key := f.queue.pop()
	ds := f.items[key]
	delete(f.items, key)
	if len(f.items) == 0 && f.peak > shrinkAfter {
		// Go maps never shrink: after a big list the emptied map would keep
		// about 80 bytes per object of the initial sync for good.
		f.items, f.peak = map[string]Deltas[T]{}, 0
	}
	f.inflightKey, f.inflight = key, ds
	f.mu.Unlock()

	var err error
	defer f.finish(key, ds, &err)
	if process != nil {
		err = process(ds, initial)
	}
	return ds, err
}

// finish retires the Pop in progress, requeueing if asked; it runs even if
// process panics.
func (f *FIFO[T]) finish(key string, ds Deltas[T], err *error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inflightKey, f.inflight = "", nil
	if *err != nil && errors.Is(*err, ErrRequeue) {
		f.requeueLocked(key, ds)
		return
	}
	if f.initial > 0 {
		f.initial--
		f.checkSyncedLocked()
	}
}

func (f *FIFO[T]) requeueLocked(key string, ds Deltas[T]) {
	newer, queued := f.items[key]
	// A fresh slice: ds was handed to the caller.
	merged := make(Deltas[T], len(ds), len(ds)+len(newer))
	copy(merged, ds)
	for _, d := range newer {
		merged = appendDeduped(merged, d)
	}
	f.items[key] = merged
	if !queued {
		f.queue.push(key)
		f.cond.Signal()
	}
}

func (f *FIFO[T]) syncedLocked() bool { return f.populated && f.initial == 0 }

// HasSynced reports whether the first Replace's objects and tombstones have
// all been popped and processed (without a requeue), or whether the first
// write was an Add, Update or Delete rather than a Replace.
func (f *FIFO[T]) HasSynced() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.syncedLocked()
}

// Done returns a channel closed when HasSynced becomes true.
func (f *FIFO[T]) Done() <-chan struct{} { return f.done }

// Flush wakes a Pop waiting for work if the queue holds some: the end of a
// batch of writes (see WakeOnFlush). Without WakeOnFlush it does nothing
// that a write has not done already.
func (f *FIFO[T]) Flush() {
	f.mu.Lock()
	work := f.queue.len() > 0
	f.mu.Unlock()
	if work {
		f.cond.Signal()
	}
}

// Close makes Pop return ErrClosed once the queue is empty; queued deltas
// can still be popped. Writes after Close are accepted.
func (f *FIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}

// IsClosed reports whether Close was called.
func (f *FIFO[T]) IsClosed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closed
}

// Len is the number of queued keys.
func (f *FIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queue.len()
}

// Idle reports whether nothing is queued and no Pop is in progress: every
// write so far has been popped and processed. A consumer holding the lock
// its process function takes can rely on it until it lets go: what it
// stores is then exactly what was written.
func (f *FIFO[T]) Idle() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queue.len() == 0 && f.inflight == nil
}

// ListKeys returns the queued keys in the order Pop will take them.
func (f *FIFO[T]) ListKeys() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queue.list()
}

// Get returns a copy of the deltas queued for obj's key.
func (f *FIFO[T]) Get(obj T) (Deltas[T], bool, error) {
	key, err := f.key(obj)
	if err != nil {
		return nil, false, fmt.Errorf("delta fifo get: %w", err)
	}
	ds, ok := f.GetByKey(key)
	return ds, ok, nil
}

// GetByKey returns a copy of the deltas queued for key.
func (f *FIFO[T]) GetByKey(key string) (Deltas[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ds, ok := f.items[key]
	if !ok {
		return nil, false
	}
	out := make(Deltas[T], len(ds))
	copy(out, ds)
	return out, true
}
