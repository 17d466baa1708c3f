package listwatch

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/store"
)

// Handler receives an informer's notifications. See processor.Handler.
type Handler = processor.Handler[*Object]

// HandlerFuncs adapts plain functions to a Handler.
type HandlerFuncs = processor.HandlerFuncs[*Object]

// Informer keeps an indexed cache of one resource in sync with the server and
// tells handlers about every change: the pipeline Reflector → delta.FIFO →
// indexer → processor (client-go's SharedIndexInformer).
//
// Configure it through its exported fields before Run: NewInformer fills
// the defaults and Run takes them once (decision 17). Add handlers and
// indexers before or after. Run owns the reflector's goroutine, the reader
// of a watch that has deadlines, and one goroutine per handler, and returns
// only once all are gone.
//
// Differences from client-go, on purpose:
//   - Objects are transformed once, by the source as it reads them (for a
//     *httpwatch.ResourceClient: cut to its Projection, metadata.managedFields
//     dropped unless KeepManagedFields, then its Transform), never again.
//   - A relist that brings back an object at the resourceVersion the cache
//     already holds is a resync, not a change: only handlers whose resync is
//     due hear of it (upstream floods every handler after each relist).
//   - A handler panic is recovered, logged and counted in Stats
//     (Processor.RePanic restores upstream's crash).
//   - OnDelete gets the last known object and a finalStateUnknown flag
//     instead of a tombstone to unwrap.
//   - A failing list or watch is logged once, not once per retry, at Error
//     with what to do when retrying cannot cure it (decision 20), and
//     Wait returns the reason (decision 21).
//   - A Projection path no cached object has is reported after the first
//     sync (decision 22).
//   - The queue's consumer and the handlers are woken once per read of
//     the watch stream, not once per event (decision 33; see
//     reflector.Flusher and delta.FIFO.WakeOnFlush).
type Informer struct {
	// Reflector tunes how the cache is filled: name, paging, watch-list,
	// backoff, watch timeouts, a saved version to resume from. What it
	// holds is NewInformer's Selector.
	Reflector reflector.Options
	// Processor tunes how handlers are called: panics, buffer blocks.
	Processor processor.Options
	// OnError sees every error the informer recovers from: each a
	// *reflector.SyncError, or an error of the cache refusing a change.
	OnError func(error)
	// Logger is the logger of every part of the informer. Recovered handler
	// panics are logged at Error; a failing list or watch once at Warn, or at
	// Error with what to do when it will not fix itself, then summarised
	// (decision 20); routine errors at Debug.
	Logger *slog.Logger
	// Clock tells the time for resyncs, backoff and handler resync periods.
	Clock clock.Clock
	// Snapshot, if its Dir is set, keeps a snapshot of the cache in a file
	// and starts from it (a warm start, decision 32): handlers hear its
	// objects as initial adds, the cache serves them at once (see Stats().Snapshot
	// and decision 37), and the watch resumes from its resourceVersion; the
	// informer is synced once the server confirms it. A restored
	// snapshot's version takes the place of Reflector.ResourceVersion.
	Snapshot snapshot.Options
	// Mirror, if set, is handed everything the reflector hands the cache's
	// queue, in the server's order, on the reflector's goroutine, just
	// before the queue; and every watch bookmark's version if it is a
	// reflector.Progresser. Where handlers hear of changes key by key (the
	// queue merges a key's changes), a Mirror sees each version the
	// informer reaches, exactly: what a cache served onwards needs
	// (decision 43). Its errors are reported as the queue's are; the queue
	// gets the change regardless. A restored snapshot (a warm start) is
	// handed to it as a Replace at the snapshot's version, before anything
	// the reflector hands it.
	Mirror reflector.Sink

	sel       Selector      // labels and fields; the projection is the source's
	resync    time.Duration // default handler resync period
	fifo      *delta.FIFO[*Object]
	indexer   *indexer.Cache[*Object]
	reflector *reflector.Reflector
	processor *processor.Processor[*Object]

	// mu is held while a batch of deltas is applied and distributed, and
	// while a handler joins, so a late handler sees every object exactly once.
	mu          sync.Mutex
	started     bool
	stopped     bool
	checkPeriod time.Duration
	onError     func(error)   // OnError as Run found it
	syncErr     lastError     // for the waits
	running     chan struct{} // closed as Run begins
	done        chan struct{} // closed once Run has returned
	runGrace    time.Duration // DefaultRunGrace; shorter in tests
	defaultName string        // Reflector.Name as NewInformer set it
	id          Identity      // as Run took it
	projection  projectionCheck
	warm        warm
}

// DefaultRunGrace is how long Informer.Wait lets a Run called in a
// goroutine (go inf.Run(ctx)) take to begin before it says the informer
// was never started.
const DefaultRunGrace = time.Second

// NewInformer returns an informer of the objects source lists and watches,
// with a namespace index and resync as the default handler resync period
// (0: none; a negative period makes AddEventHandler fail). Its logs,
// errors, metrics and snapshot file name it after its Identity, "pods.v1
// in default" (decision 41), unless Reflector.Name says otherwise.
//
// sel, at most one, says which objects and which of their fields the
// informer keeps: the one place selectors and a projection are said
// (decision 41). A projection cuts objects as the client reads them, so
// it needs a *httpwatch.ResourceClient source, which the informer then
// owns; a source that wraps one (shard.Member.Source) is given the
// projection on the client it wraps. Either mistake panics, as a
// programming error.
func NewInformer(source httpwatch.ListerWatcher, resync time.Duration, sel ...Selector) *Informer {
	if len(sel) > 1 {
		panic(fmt.Sprintf("listwatch: NewInformer(%s) with %d selectors: give at most one", reflector.NameOf(source.Info()), len(sel)))
	}
	var s Selector
	if len(sel) == 1 {
		s = sel[0]
	}
	if s.Projection != nil {
		rc, ok := source.(*httpwatch.ResourceClient)
		if !ok {
			panic(fmt.Sprintf("listwatch: NewInformer(%s): a projection needs a *httpwatch.ResourceClient source; set it on the client %T wraps", reflector.NameOf(source.Info()), source))
		}
		rc.Projection = s.Projection
	}
	inf := &Informer{
		Reflector:   reflector.Options{Name: reflector.NameOf(source.Info())},
		Processor:   processor.DefaultOptions(),
		Logger:      slog.Default(),
		Clock:       clock.Real,
		sel:         s,
		resync:      resync,
		checkPeriod: max(resync, 0),
		warm:        newWarm(),
		running:     make(chan struct{}),
		done:        make(chan struct{}),
		runGrace:    DefaultRunGrace,
		processor:   processor.New[*Object](),
		indexer:     indexer.New(store.MetaNamespaceKey[*Object], indexer.Indexers[*Object]{indexer.Namespace: indexer.NamespaceIndex[*Object]}),
	}
	inf.fifo = delta.NewFIFO(store.MetaNamespaceKey[*Object])
	inf.fifo.KnownObjects = inf.indexer
	// The reflector flushes the queue before it may wait for the server
	// (reflector.Flusher), so the pop loop is woken once per read of the
	// watch rather than once per event.
	inf.fifo.WakeOnFlush = true
	inf.reflector = reflector.New(source, inf.fifo)
	inf.defaultName = inf.Reflector.Name
	inf.processor.Synced = inf.HasSynced
	return inf
}

func (inf *Informer) logger() *slog.Logger {
	if inf.Logger == nil {
		return slog.Default()
	}
	return inf.Logger
}

func (inf *Informer) clock() clock.Clock {
	if inf.Clock == nil {
		return clock.Real
	}
	return inf.Clock
}

// AddEventHandler registers h with the informer's default resync period.
func (inf *Informer) AddEventHandler(h Handler) (*processor.Registration, error) {
	return inf.AddEventHandlerWithResync(h, inf.resync)
}

// AddEventHandlerWithResync registers h with its own resync period. A
// handler added after the informer started first receives an add for every
// cached object (isInInitialList true), then every later change, none twice
// and none missed. Periods follow client-go: below 1 s they are raised to
// 1 s; before Run a shorter period shortens the informer's resync check,
// after Run a period shorter than that check is raised to it; an informer
// created without resync gives handlers none. Once the informer has
// stopped it fails with an error wrapping processor.ErrStopped.
func (inf *Informer) AddEventHandlerWithResync(h Handler, period time.Duration) (*processor.Registration, error) {
	if period < 0 {
		return nil, fmt.Errorf("add event handler: negative resync period %v", period)
	}
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return nil, fmt.Errorf("add event handler: informer %w", processor.ErrStopped)
	}
	if period > 0 && period < processor.MinResyncPeriod {
		period = processor.MinResyncPeriod
	}
	switch {
	case period <= 0 || inf.checkPeriod == 0:
		period = 0
	case inf.started && period < inf.checkPeriod:
		inf.logger().Warn("handler resync period raised to the informer's resync check period",
			"requested", period, "used", inf.checkPeriod)
		period = inf.checkPeriod
	case !inf.started && period < inf.checkPeriod:
		inf.checkPeriod = period
	}
	var initial []*Object
	if inf.started {
		initial = inf.indexer.List()
	}
	return inf.processor.AddHandler(h, period, initial)
}

// RemoveEventHandler stops delivering to the handler of reg. It does not
// wait for a notification in progress; see Registration.Shutdown for that.
// A registration from another informer is ignored, as upstream does.
func (inf *Informer) RemoveEventHandler(reg *processor.Registration) {
	inf.processor.RemoveHandler(reg)
}

// AddIndexers adds indices to the cache, indexing what it already holds;
// once the informer has stopped it fails with an error wrapping
// processor.ErrStopped.
func (inf *Informer) AddIndexers(ix indexer.Indexers[*Object]) error {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.stopped {
		return fmt.Errorf("add indexers: informer %w", processor.ErrStopped)
	}
	return inf.indexer.AddIndexers(ix)
}

// Indexer returns the informer's cache. Read it freely; writing to it
// desynchronises the informer.
func (inf *Informer) Indexer() *indexer.Cache[*Object] { return inf.indexer }

// Lister returns a Lister reading the informer's cache.
func (inf *Informer) Lister() *Lister { return &Lister{cache: inf.indexer} }

// HasSynced reports whether the first full list has been applied to the
// cache and handed to the handlers' buffers, or the watch resumed from a
// restored snapshot confirmed it (decision 32): what Wait waits for, as a
// predicate for health checks. A handler's own Registration says when the
// handler itself has seen it.
func (inf *Informer) HasSynced() bool { return inf.fifo.HasSynced() || inf.warm.isConfirmed() }

// LastSyncResourceVersion is the resourceVersion the cache is synced to
// ("" before the first list).
func (inf *Informer) LastSyncResourceVersion() string {
	return inf.reflector.LastSyncResourceVersion()
}

// Stats is a snapshot of what an informer holds and has done: enough to
// export cache sizes and sync health as metrics.
type Stats struct {
	reflector.Stats
	Objects       int    // objects in the cache
	Queued        int    // keys with changes not yet applied to the cache
	HandlerPanics uint64 // handler panics recovered (or reported before re-panicking)
	// UnmatchedPaths counts the paths of the source's Projection that no
	// cached object had at the first sync (decision 22).
	UnmatchedPaths int
	// Snapshot is about the snapshots the informer saves (decision 32).
	Snapshot SnapshotStats
}

// Stats returns a snapshot of the informer's counters. Each handler's backlog
// is its Registration's Pending.
func (inf *Informer) Stats() Stats {
	return Stats{
		Stats:          inf.reflector.Stats(),
		Objects:        inf.indexer.Len(),
		Queued:         inf.fifo.Len(),
		HandlerPanics:  inf.processor.Panics(),
		UnmatchedPaths: inf.projection.unmatched(),
		Snapshot:       inf.warm.saves.stats(),
	}
}

// IsStopped reports whether Run has returned.
func (inf *Informer) IsStopped() bool {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.stopped
}

// Relist makes the informer list again as soon as it can (see
// reflector.Reflector.Relist): handlers then hear of every difference
// between the cache and the new list.
func (inf *Informer) Relist() { inf.reflector.Relist() }

// identityOf reads the identity of an informer from its source and its
// reflector's selectors; inf.mu is held or the informer not yet shared.
func identityOf(inf *Informer) Identity {
	id := Identity{
		Resource:      inf.reflector.Source.Info().Resource,
		LabelSelector: inf.sel.Label,
		FieldSelector: inf.sel.Field,
	}
	if rc, ok := inf.reflector.Source.(*httpwatch.ResourceClient); ok {
		id.Projection = projectionString(rc.Projection)
	}
	return id
}

// Identity returns what the informer caches (decision 41). Before Run it
// is read from the fields as they are; from Run on, as Run took them.
func (inf *Informer) Identity() Identity {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if inf.started {
		return inf.id
	}
	return identityOf(inf)
}

// Name returns the name the informer's logs, errors and metrics use: its
// Reflector.Name, which defaults to its Identity, made distinct with " #2",
// " #3"... while another running informer of the same client has it
// (decision 41).
func (inf *Informer) Name() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	if !inf.started && inf.Reflector.Name == inf.defaultName {
		return identityOf(inf).String()
	}
	return inf.Reflector.Name
}
