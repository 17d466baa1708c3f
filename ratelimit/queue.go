package ratelimit

import (
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// Config configures a Queue. The zero value is a usable configuration: every
// field left empty gets the default NewQueue documents for it.
type Config[T comparable] struct {
	// Name is passed to every Metrics call, so one Metrics can serve many
	// queues. It may be empty.
	Name string
	// Clock tells the time for delayed adds and metrics. Default clock.Real.
	Clock clock.Clock
	// Limiter decides the delay of AddRateLimited. Default
	// DefaultControllerRateLimiter, its token bucket reading Clock.
	Limiter Limiter[T]
	// Metrics receives what the queue measures. Default NopMetrics, in which
	// case the queue does not read the clock on Add, Get or Done.
	Metrics Metrics
}

// Queue is a work queue for controllers: a FIFO of items that need
// processing, with three guarantees that make it safe to feed from event
// handlers and drain from several workers.
//
//   - An item waiting in the queue is stored once, however often it is added.
//   - An item is handed to at most one worker at a time: from Get until Done it
//     is "processing", and adding it then only marks it dirty.
//   - A dirty item is queued again when its worker calls Done, so a change seen
//     while the item was being processed is never lost.
//
// Items can also be added later (AddAfter) or after a delay chosen by a
// Limiter from the item's failure history (AddRateLimited). Delayed items wait
// in a min-heap served by one goroutine per queue, which NewQueue starts and
// ShutDown stops; nothing else runs in the background.
//
// A Queue must be made with NewQueue. All methods are safe for concurrent use.
type Queue[T comparable] struct {
	name    string
	clock   clock.Clock
	limiter Limiter[T]
	metrics Metrics // nil when the caller asked for none

	mu    sync.Mutex
	cond  sync.Cond       // signalled when fifo gains an item, shutdown starts, or processing empties during shutdown
	fifo  ring[T]         // items ready to be handed out, each at most once
	items map[T]entry     // every item that is dirty, processing, or both
	busy  map[T]time.Time // processing items and when Get handed them out; only kept with metrics
	since map[T]time.Time // dirty items and when they became so; only kept with metrics
	nBusy int             // processing items

	waiting heap[T] // delayed items, earliest first
	timer   clock.Timer

	shuttingDown bool
	drain        bool          // a ShutDownWithDrain is waiting and no plain ShutDown has cancelled it
	stop         chan struct{} // closed by the first shutdown; ends the loop
	loopDone     chan struct{} // closed when the loop has returned
}

// entry is one item's state. An item is in fifo exactly when it is dirty and
// not processing. It is kept this small because items is probed on every
// Add, Get and Done: times live in maps that exist only with metrics.
type entry struct {
	dirty      bool // needs processing
	processing bool // a worker holds it
}

// NewQueue returns a running Queue configured by cfg, with defaults filled in
// for the fields left empty. It starts the queue's one goroutine, which waits
// for delayed items; call ShutDown or ShutDownWithDrain to stop it.
func NewQueue[T comparable](cfg Config[T]) *Queue[T] {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real
	}
	if cfg.Limiter == nil {
		cfg.Limiter = defaultController[T](cfg.Clock)
	}
	q := &Queue[T]{
		name:     cfg.Name,
		clock:    cfg.Clock,
		limiter:  cfg.Limiter,
		items:    map[T]entry{},
		waiting:  heap[T]{index: map[T]*delayed[T]{}},
		stop:     make(chan struct{}),
		loopDone: make(chan struct{}),
	}
	if _, nop := cfg.Metrics.(NopMetrics); cfg.Metrics != nil && !nop {
		q.metrics = cfg.Metrics
		q.busy = map[T]time.Time{}
		q.since = map[T]time.Time{}
	}
	q.cond.L = &q.mu
	q.timer = q.clock.NewTimer(maxWait)
	go q.loop()
	return q
}

// Add queues item unless it is already waiting, in which case it does
// nothing. If a worker is processing item, item is queued again when that
// worker calls Done. After ShutDown, Add does nothing.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	q.addLocked(item)
}

func (q *Queue[T]) addLocked(item T) {
	e := q.items[item]
	if e.dirty {
		return
	}
	e.dirty = true
	if q.metrics != nil {
		q.since[item] = q.clock.Now()
		q.metrics.Added(q.name)
	}
	q.items[item] = e
	if !e.processing {
		q.fifo.push(item)
		q.cond.Signal()
	}
}

// Get blocks until an item is ready and hands it to the caller, who must call
// Done with it when finished. After ShutDown, Get keeps handing out the items
// still queued and then returns the zero T and shutdown true: the caller's
// cue to stop working.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.fifo.len() == 0 && !q.shuttingDown {
		q.cond.Wait()
	}
	if q.fifo.len() == 0 {
		return item, true
	}
	item = q.fifo.pop()
	e := q.items[item]
	e.dirty, e.processing = false, true
	if q.metrics != nil {
		now := q.clock.Now()
		q.busy[item] = now
		q.metrics.Started(q.name, now.Sub(q.since[item]))
		delete(q.since, item)
	}
	q.items[item] = e
	q.nBusy++
	return item, false
}

// Done tells the queue the worker has finished with item. If item was added
// while being processed, it is queued again now. Done for an item that is not
// being processed does nothing.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	e, ok := q.items[item]
	if !ok || !e.processing {
		return
	}
	if q.metrics != nil {
		q.metrics.Finished(q.name, q.clock.Since(q.busy[item]))
		delete(q.busy, item)
	}
	q.nBusy--
	if e.dirty {
		e.processing = false
		q.items[item] = e
		q.fifo.push(item)
		q.cond.Signal()
	} else {
		delete(q.items, item)
	}
	if q.nBusy == 0 && q.shuttingDown {
		q.cond.Broadcast() // ShutDownWithDrain may be waiting for this
	}
}

// Len returns how many items wait to be handed out. Items being processed and
// items whose delay has not passed are not counted.
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.fifo.len()
}

// ShutDown makes the queue refuse new items and wakes every Get: they hand out
// what is still queued, then report shutdown. Items still waiting for their
// delay are dropped. ShutDown does not wait for workers, but it does cancel
// the wait of a ShutDownWithDrain in progress. It returns once the queue's
// goroutine has stopped.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	q.drain = false
	q.shutdownLocked()
	q.mu.Unlock()
	<-q.loopDone
}

// ShutDownWithDrain shuts the queue down like ShutDown and then waits until
// every item handed out by Get has been passed to Done, or until a ShutDown
// call cancels the wait. Workers must keep calling Done, or it waits forever.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.drain = true
	q.shutdownLocked()
	for q.nBusy > 0 && q.drain {
		q.cond.Wait()
	}
	q.mu.Unlock()
	<-q.loopDone
}

func (q *Queue[T]) shutdownLocked() {
	if !q.shuttingDown {
		q.shuttingDown = true
		close(q.stop)
	}
	q.cond.Broadcast()
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain has been called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}
