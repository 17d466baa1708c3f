package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// MinResyncPeriod is the shortest resync period a handler can have; shorter
// non-zero periods are raised to it.
const MinResyncPeriod = time.Second

// DefaultBufferBlockSize is the number of notifications a handler's buffer
// holds before it first grows, and the step by which it grows and shrinks.
const DefaultBufferBlockSize = 1024

// ErrStopped is the module's one error for a part whose Run has returned
// and that can do no more: AddHandler once the processor's Run has
// returned, and so an informer's AddEventHandler and AddIndexers once it
// has stopped, and a shard.Member's Run and Acquire once it is leaving.
// Each wraps it with what it was asked to do.
var ErrStopped = errors.New("stopped")

// Processor fans an informer's notifications out to its handlers. Each
// handler has a listener: a goroutine of its own behind an unbounded buffer.
//
// Distribute never blocks on a handler: it appends the notification to every
// listener's buffer and returns, so one slow or stuck handler delays neither
// the informer nor the other handlers; it only grows its own buffer. Each
// handler sees its notifications one at a time and in the order they were
// distributed.
//
// Notifications distributed before Run are kept and delivered once Run
// starts the listeners. (client-go's Distribute blocks until then instead.)
// When Run's context is done, notifications still buffered are dropped: a
// stopping informer owes its handlers nothing more.
//
// Resync: each handler may ask for a resync period. ShouldResync, called on
// the informer's resync timer, marks the handlers whose period elapsed, and
// a notification with Resync set goes to those handlers only. A handler
// with no resync period never receives one; client-go sends them to every
// handler until its first resync check, which floods handlers that asked
// for no resync after every relist.
//
// A handler that panics does not take the informer down: the panic is
// recovered, reported through OnPanic and Logger, and the handler goes on
// with its next notification. Set RePanic to crash instead, as client-go
// does by default.
//
// Set the exported fields before Run and leave them alone afterwards. All
// methods are safe for concurrent use.
type Processor[T any] struct {
	// Options tune how handlers are called.
	Options

	// Clock tells the time for resync periods.
	Clock clock.Clock

	// Logger reports recovered handler panics.
	Logger *slog.Logger

	// Synced reports whether the informer has synced; a Registration is
	// synced only once this is true too. Nil counts as true.
	Synced func() bool

	panics    atomic.Uint64
	mu        sync.RWMutex
	listeners []*listener[T]
	running   bool
	stopped   bool
	wg        sync.WaitGroup // listener goroutines
}

// Options tune how a Processor calls its handlers: the part of its
// configuration that carries no wiring, so that an informer can take it as
// a value (listwatch.Informer.Processor).
type Options struct {
	// RePanic makes a handler panic crash the program after it has been
	// reported, instead of being recovered.
	RePanic bool

	// OnPanic, if set, is called from the handler's goroutine with what
	// the handler panicked with and the goroutine's stack. It must not
	// panic itself.
	OnPanic func(recovered any, stack []byte)

	// BufferBlockSize is the number of notifications by which a handler's
	// buffer grows and gives memory back; an empty buffer holds one block.
	BufferBlockSize int
}

// DefaultOptions returns the defaults: panics recovered, buffer blocks of
// DefaultBufferBlockSize.
func DefaultOptions() Options { return Options{BufferBlockSize: DefaultBufferBlockSize} }

// New returns a Processor with DefaultOptions, the real clock and
// slog.Default, so that a recovered panic is never silent.
func New[T any]() *Processor[T] {
	return &Processor[T]{
		Options: DefaultOptions(),
		Clock:   clock.Real,
		Logger:  slog.Default(),
	}
}

// AddHandler registers h and returns its Registration.
//
// The initial objects are delivered to h first, as OnAdd(obj, true), and to
// no other handler: an informer passes its cache here when a handler joins
// after the initial list, and must not call Distribute until AddHandler
// returns so that h sees neither a gap nor a duplicate.
//
// resyncPeriod is how often h wants resync notifications; 0 means never,
// and a period below MinResyncPeriod is raised to it. The first resync is
// due one period after h is added. If the processor is running, h's
// listener starts at once; otherwise it starts with Run.
//
// AddHandler fails if h is nil, the period is negative, or the processor
// has stopped (ErrStopped).
func (p *Processor[T]) AddHandler(h Handler[T], resyncPeriod time.Duration, initial []T) (*Registration, error) {
	if h == nil {
		return nil, errors.New("add handler: nil handler")
	}
	if resyncPeriod < 0 {
		return nil, fmt.Errorf("add handler: negative resync period %v", resyncPeriod)
	}
	if resyncPeriod > 0 && resyncPeriod < MinResyncPeriod {
		resyncPeriod = MinResyncPeriod
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return nil, fmt.Errorf("add handler: processor %w", ErrStopped)
	}
	l := &listener[T]{
		p:       p,
		handler: h,
		period:  resyncPeriod,
		buf:     newBuffer[Notification[T]](p.blockSize()),
		doneCh:  make(chan struct{}),
	}
	l.cond.L = &l.mu
	if resyncPeriod > 0 {
		l.nextResync = p.now().Add(resyncPeriod)
	}
	for _, obj := range initial {
		l.push(Added(obj, true), true)
	}
	p.listeners = append(p.listeners, l)
	if p.running {
		p.start(l)
	}
	return &Registration{l: l}, nil
}

// RemoveHandler removes the handler of r, as r.Remove does, if r came from
// p's AddHandler. A Registration from another Processor is ignored, so one
// informer cannot unregister another's handler.
func (p *Processor[T]) RemoveHandler(r *Registration) {
	if r == nil {
		return
	}
	if l, ok := r.l.(*listener[T]); ok && l.p == p {
		l.remove()
	}
}

// Distribute hands n to every handler, or, if n.Resync is set, to the
// handlers whose resync is due (see ShouldResync). It returns without
// waiting for any handler. After Run has returned it does nothing, and a
// notification of no known Kind is dropped.
func (p *Processor[T]) Distribute(n Notification[T]) { p.distribute(n, true) }

// Post is Distribute without the wake-up: n joins each handler's buffer in
// order, and a handler busy with earlier notifications takes it in turn,
// but one waiting for work goes on waiting until Flush (or a Distribute).
// A distributor that hands out changes in batches posts each one and
// flushes at the end of the batch, so a waiting handler's goroutine is
// woken once per batch instead of once per change: each wake-up of a
// parked goroutine may cost a thread wake-up in the kernel.
func (p *Processor[T]) Post(n Notification[T]) { p.distribute(n, false) }

// Flush wakes every handler waiting for work while its buffer holds some:
// the end of a batch of Posts.
func (p *Processor[T]) Flush() {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, l := range p.listeners {
		l.flush()
	}
}

func (p *Processor[T]) distribute(n Notification[T], wake bool) {
	if n.Kind < KindAdd || n.Kind > KindDelete {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.stopped {
		return
	}
	for _, l := range p.listeners {
		if n.Resync && !l.syncing {
			continue
		}
		l.push(n, wake)
	}
}

// ShouldResync reports whether any handler's resync is due, and makes the
// handlers that are due, and only those, the receivers of Resync
// notifications until the next call. Each due handler's next resync is
// scheduled one period from now. An informer calls it on its resync timer
// and, when it returns true, distributes a resync of its cache.
func (p *Processor[T]) ShouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	due := false
	for _, l := range p.listeners {
		l.syncing = l.period > 0 && !now.Before(l.nextResync)
		if l.syncing {
			l.nextResync = now.Add(l.period)
			due = true
		}
	}
	return due
}

// ShortestResyncPeriod returns the shortest resync period among the
// registered handlers, or 0 if none wants resyncs: an informer checks
// ShouldResync at least this often.
func (p *Processor[T]) ShortestResyncPeriod() time.Duration {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var shortest time.Duration
	for _, l := range p.listeners {
		if l.period > 0 && (shortest == 0 || l.period < shortest) {
			shortest = l.period
		}
	}
	return shortest
}

// Run starts the listeners, and those added later as they are added, then
// waits for ctx to be done. It then stops accepting handlers and
// notifications, drops what handlers have not received yet, and returns
// once every handler has returned from the call it was in and every
// listener goroutine has exited: a handler that never returns keeps Run
// from returning.
//
// A processor runs once; calling Run again returns at once.
func (p *Processor[T]) Run(ctx context.Context) {
	p.mu.Lock()
	if p.running || p.stopped {
		p.mu.Unlock()
		p.logger().Warn("processor: Run called more than once; ignoring")
		return
	}
	p.running = true
	for _, l := range p.listeners {
		// Handlers added before Run follow the settings Run found: their
		// first resync is one period after it, and an empty buffer takes
		// the block size.
		if l.period > 0 {
			l.nextResync = p.now().Add(l.period)
		}
		l.resize(p.blockSize())
		p.start(l)
	}
	p.mu.Unlock()

	<-ctx.Done()

	p.mu.Lock()
	p.stopped = true
	listeners := p.listeners
	p.listeners = nil
	p.mu.Unlock()
	for _, l := range listeners {
		l.stop()
	}
	p.wg.Wait()
}

// start launches l's goroutine; p.mu must be held, so that Run's final
// wg.Wait cannot begin before the wg.Add.
func (p *Processor[T]) start(l *listener[T]) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return
	}
	l.started = true
	p.wg.Go(l.run)
}

func (p *Processor[T]) remove(l *listener[T]) {
	p.mu.Lock()
	p.listeners = slices.DeleteFunc(p.listeners, func(x *listener[T]) bool { return x == l })
	p.mu.Unlock()
	l.stop()
}

func (p *Processor[T]) synced() bool { return p.Synced == nil || p.Synced() }

func (p *Processor[T]) now() time.Time {
	if p.Clock == nil {
		return time.Now()
	}
	return p.Clock.Now()
}

func (p *Processor[T]) logger() *slog.Logger {
	if p.Logger == nil {
		return slog.Default()
	}
	return p.Logger
}

func (p *Processor[T]) blockSize() int {
	if p.BufferBlockSize <= 0 {
		return DefaultBufferBlockSize
	}
	return p.BufferBlockSize
}

// Panics returns how many handler panics the processor has recovered (or
// reported before re-panicking).
func (p *Processor[T]) Panics() uint64 { return p.panics.Load() }

func (p *Processor[T]) reportPanic(recovered any, stack []byte) {
	p.panics.Add(1)
	p.logger().Error("processor: handler panicked", "panic", recovered, "stack", string(stack))
	if p.OnPanic != nil {
		p.OnPanic(recovered, stack)
	}
}
