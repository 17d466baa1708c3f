package processor

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// listener feeds one handler from its own buffer on its own goroutine.
type listener[T any] struct {
	p       *Processor[T]
	handler Handler[T]
	period  time.Duration // 0: no resync; fixed at creation

	// Guarded by p.mu.
	nextResync time.Time
	syncing    bool // receives Resync notifications

	mu      sync.Mutex
	cond    sync.Cond // signalled when buf gains an item or stopped is set
	buf     buffer[Notification[T]]
	waiting bool // the goroutine is parked on cond
	started bool
	stopped bool

	initialPending atomic.Int64  // initial-list adds queued or being handled
	doneCh         chan struct{} // closed when the goroutine exits, or at stop if it never started
}

// push appends n to the buffer and, if wake is set, wakes the goroutine
// should it be waiting for work. Without wake a waiting goroutine sleeps on
// until flush; a running one finds n by itself.
func (l *listener[T]) push(n Notification[T], wake bool) {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	if n.Kind == KindAdd && n.IsInInitialList {
		l.initialPending.Add(1)
	}
	l.buf.push(n)
	wake = wake && l.waiting
	if wake {
		l.waiting = false
	}
	l.mu.Unlock()
	if wake {
		l.cond.Signal()
	}
}

// flush wakes the goroutine if it waits while the buffer holds work.
func (l *listener[T]) flush() {
	l.mu.Lock()
	wake := l.waiting && l.buf.len() > 0
	if wake {
		l.waiting = false
	}
	l.mu.Unlock()
	if wake {
		l.cond.Signal()
	}
}

// resize gives an empty buffer blocks of size n.
func (l *listener[T]) resize(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.buf.len() == 0 && l.buf.blockSize != n {
		l.buf = newBuffer[Notification[T]](n)
	}
}

// stop drops the buffered notifications and tells the goroutine to exit
// after the handler call in progress, if any. It is idempotent.
func (l *listener[T]) stop() {
	l.mu.Lock()
	if l.stopped {
		l.mu.Unlock()
		return
	}
	l.stopped = true
	l.buf.reset()
	started := l.started
	l.mu.Unlock()
	l.cond.Signal()
	if !started {
		close(l.doneCh)
	}
}

func (l *listener[T]) run() {
	defer close(l.doneCh)
	for {
		l.mu.Lock()
		for l.buf.len() == 0 && !l.stopped {
			l.waiting = true
			l.cond.Wait()
		}
		if l.stopped {
			l.mu.Unlock()
			return
		}
		n, _ := l.buf.pop()
		l.mu.Unlock()
		l.deliver(&n)
	}
}

func (l *listener[T]) deliver(n *Notification[T]) {
	if n.Kind == KindAdd && n.IsInInitialList {
		defer l.initialPending.Add(-1)
	}
	defer func() {
		if r := recover(); r != nil {
			l.p.reportPanic(r, debug.Stack())
			if l.p.RePanic {
				panic(r)
			}
		}
	}()
	n.deliver(l.handler)
}

// Registration is a handler's membership in a Processor, returned by
// AddHandler. Its methods are safe for concurrent use; those of a nil or
// zero Registration do nothing and describe a handler that is gone.
type Registration struct {
	l interface {
		remove()
		done() <-chan struct{}
		pending() int
		hasSynced() bool
		resyncPeriod() time.Duration
	}
}

// HasSynced reports whether the informer has synced (Processor.Synced) and
// the handler has returned from every initial-list add it was given. It can
// turn true later than the informer's own HasSynced, since the handler works
// through its buffer at its own pace. A handler removed before it handled
// its initial list never reports synced.
func (r *Registration) HasSynced() bool { return r != nil && r.l != nil && r.l.hasSynced() }

// Remove unregisters the handler: it receives nothing more, and its buffered
// notifications are dropped. Remove does not wait for a handler call in
// progress to return; Shutdown does. Calling it again does nothing.
func (r *Registration) Remove() {
	if r != nil && r.l != nil {
		r.l.remove()
	}
}

// Shutdown removes the handler like Remove, then waits until its goroutine
// has exited, that is until a handler call in progress has returned. It
// returns ctx's error, wrapped, if ctx is done first, as it is bound to be
// when a handler shuts itself down.
func (r *Registration) Shutdown(ctx context.Context) error {
	if r == nil || r.l == nil {
		return nil
	}
	r.l.remove()
	select {
	case <-r.l.done():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("shut down handler: %w", ctx.Err())
	}
}

// Pending returns how many notifications wait in the handler's buffer.
func (r *Registration) Pending() int {
	if r == nil || r.l == nil {
		return 0
	}
	return r.l.pending()
}

// ResyncPeriod returns the handler's resync period after adjustment to
// MinResyncPeriod; 0 means the handler gets no resyncs.
func (r *Registration) ResyncPeriod() time.Duration {
	if r == nil || r.l == nil {
		return 0
	}
	return r.l.resyncPeriod()
}

func (l *listener[T]) remove()                     { l.p.remove(l) }
func (l *listener[T]) done() <-chan struct{}       { return l.doneCh }
func (l *listener[T]) resyncPeriod() time.Duration { return l.period }
func (l *listener[T]) hasSynced() bool {
	// Synced first: once the informer has synced, every initial add has
	// been pushed, so a zero count cannot be one that is about to rise.
	return l.p.synced() && l.initialPending.Load() == 0
}

func (l *listener[T]) pending() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.len()
}
