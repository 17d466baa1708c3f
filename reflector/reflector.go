package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
)

// Sink receives everything a Reflector learns from the server.
// *delta.FIFO[*Object] satisfies it. Resync is called from a second
// goroutine while the reflector streams, so a Sink must be safe for
// concurrent use.
type Sink interface {
	Add(obj *httpwatch.Object) error
	Update(obj *httpwatch.Object) error
	Delete(obj *httpwatch.Object) error
	Replace(items []*httpwatch.Object, resourceVersion string) error
	Resync() error
}

// BookmarkSink is a Sink that also wants the resourceVersion of every
// bookmark (which changes no object).
type BookmarkSink interface {
	Bookmark(resourceVersion string)
}

// WatchListReporter is implemented by sources that know whether they can
// serve a watch-list stream (sendInitialEvents). A source that reports false
// is always listed page by page.
type WatchListReporter interface {
	SupportsWatchList() bool
}

// ErrVeryShortWatch reports a watch that closed within a second without
// delivering a single event: the server is probably unhealthy, so the
// reflector backs off and relists instead of hammering it.
var ErrVeryShortWatch = errors.New("watch closed within a second without an event")

// ErrUnexpectedKind reports a watch event carrying an object of another kind
// than the reflector expects (or a meta.k8s.io Table, which no cache can
// hold). The event is dropped; the watch goes on.
var ErrUnexpectedKind = errors.New("object of an unexpected kind")

// ErrNoInitialEventsEnd reports a watch-list stream that ended before the
// bookmark marking the end of the initial events.
var ErrNoInitialEventsEnd = errors.New("watch-list stream ended before the initial-events-end bookmark")

// SyncError is an error the reflector met and recovered from, reported
// through Reflector.OnError. Op says what the reflector was doing: "list",
// "watch-list", "watch start", "watch", "sink" or "resync".
type SyncError struct {
	Resource string
	Op       string
	Err      error
}

func (e *SyncError) Error() string {
	return fmt.Sprintf("reflector %s: %s: %v", e.Resource, e.Op, e.Err)
}

func (e *SyncError) Unwrap() error { return e.Err }

// Stats counts what a Reflector has done since it started.
type Stats struct {
	Lists       int64 // full syncs: paged lists and completed watch-lists
	ListPages   int64 // pages read by paged lists
	ListedItems int64 // objects received by full syncs
	Watches     int64 // watch streams opened
	Events      int64 // watch events received (bookmarks included)
	Errors      int64 // errors reported through OnError
}

// initialEventsEndAnnotation marks the bookmark that ends a watch-list's
// initial events.
const initialEventsEndAnnotation = "k8s.io/initial-events-end"

// A Reflector keeps a Sink equal to the server's state of one resource: it
// lists (page by page, or as a watch-list stream), then watches from the
// list's resourceVersion, resuming after every clean end of a watch and
// relisting when the server says the version is gone. It follows
// client-go's reflector (docs/behaviour.md, items 8–31 and decision 1):
//
//   - The first list asks for resourceVersion "0" (the watch cache); relists
//     ask for the last synced version, so the cache never goes back in time.
//     Only a list that itself fails with Expired, Gone or "too large
//     resourceVersion" falls back to "" (a consistent read).
//   - A watch that ends cleanly is reopened at once from the last version seen
//     (bookmarks included). A 410 relists at the last synced version. A watch
//     that cannot start because the connection was refused or the server
//     answered 429 is retried after a backoff without a relist.
//   - Every other failure waits one step of Backoff (800 ms doubling to
//     30 s with full jitter, reset after 2 minutes) before relisting.
//   - An error carrying the server's Retry-After waits that long instead of
//     a step (and takes none), but never longer than Backoff.Cap (30 s).
//   - With WatchList set (the default, as upstream since 1.35) the sync is a
//     watch with sendInitialEvents; a server that refuses it, or a stream that
//     fails before the initial-events-end bookmark, falls back to a paged
//     list in the same cycle. Every relist begins a new cycle (as upstream's
//     ListAndWatch does), which tries a watch-list again: a refusal is not
//     remembered, so a server upgraded to stream is used at the next relist.
//
// Unlike client-go, every error, including those upstream only logs, reaches
// OnError as a *SyncError (decision 6).
//
// Set the exported fields before Run; NewReflector fills the defaults. Run
// starts at most one extra goroutine (for resync) and stops it before
// returning.
type Reflector struct {
	Source httpwatch.ListerWatcher
	Sink   Sink
	// Name names the resource in errors and logs.
	Name string

	// ExpectedKind, if set, is the only kind of object the reflector passes
	// on; events carrying objects of another kind are dropped and reported
	// (objects without a kind pass).
	ExpectedKind string

	// LabelSelector and FieldSelector restrict every list and watch.
	LabelSelector string
	FieldSelector string

	// ResourceVersion, when set, resumes from a version saved by an earlier
	// process: the reflector watches from it without listing first, and
	// lists only if the server no longer has it. The Sink must already hold
	// the state at that version.
	ResourceVersion string

	// PageSize is the list page size; 0 chooses as client-go does (500, or
	// unpaginated when relisting at a specific version).
	PageSize int64

	// WatchList syncs through a watch-list stream instead of a paged list.
	WatchList bool

	// ResyncPeriod, if positive, calls Sink.Resync that often, when
	// ShouldResync (if set) agrees.
	ResyncPeriod time.Duration
	ShouldResync func() bool

	Backoff Backoff

	// MinWatchTimeout is the shortest server-side watch timeout; each watch
	// asks for a random timeout in [MinWatchTimeout, 2·MinWatchTimeout).
	MinWatchTimeout time.Duration

	// MaxInternalErrorRetryDuration is how long a watch ending with an
	// InternalError is reopened without a relist, counted from the first of
	// a run of them; a minute without one, or a relist, starts a new run.
	// 0 always relists.
	MaxInternalErrorRetryDuration time.Duration

	// OnError sees every error the reflector recovers from.
	OnError func(error)

	Clock  clock.Clock
	Logger *slog.Logger
	// Random returns numbers in [0, 1) for jitter and watch timeouts.
	Random func() float64

	workers sync.WaitGroup // goroutines Run started

	mu            sync.Mutex
	lastRV        string
	rvUnavailable bool // the last list said lastRV is gone: next list reads ""
	paginated     bool // the first list came back in pages: keep paging relists
	cycled        bool // a list-and-watch cycle has begun: no more resuming
	started       bool
	current       httpwatch.Watcher // the open watch, for resync failures to abort
	resyncFailed  bool
	// internalFirst and internalLast bound the current run of InternalError
	// watch ends, which MaxInternalErrorRetryDuration limits.
	internalFirst, internalLast time.Time

	stats struct {
		lists, pages, items, watches, events, errors atomic.Int64
	}
}

// NewReflector returns a Reflector reading source into sink with client-go's
// defaults.
func New(source httpwatch.ListerWatcher, sink Sink) *Reflector {
	return &Reflector{
		Source:          source,
		Sink:            sink,
		Name:            "objects",
		WatchList:       true,
		Backoff:         DefaultBackoff(),
		MinWatchTimeout: 5 * time.Minute,
		Clock:           clock.Real,
		Logger:          slog.New(slog.DiscardHandler),
		Random:          rand.Float64,
	}
}

// LastSyncResourceVersion returns the resourceVersion the Sink is synced to:
// the version of the last list, event or bookmark. It is "" before the first
// sync.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastRV
}

// Stats returns a snapshot of the reflector's counters.
func (r *Reflector) Stats() Stats {
	return Stats{
		Lists:       r.stats.lists.Load(),
		ListPages:   r.stats.pages.Load(),
		ListedItems: r.stats.items.Load(),
		Watches:     r.stats.watches.Load(),
		Events:      r.stats.events.Load(),
		Errors:      r.stats.errors.Load(),
	}
}

// Run keeps the Sink in sync until ctx is done. It returns promptly after
// cancellation, with every stream closed and its goroutines gone. Calling
// Run again while it runs returns at once.
func (r *Reflector) Run(ctx context.Context) {
	r.mu.Lock()
	if r.started {
		r.mu.Unlock()
		r.Logger.Warn("reflector already running", "resource", r.Name)
		return
	}
	r.started = true
	if r.ResourceVersion != "" && r.lastRV == "" {
		r.lastRV = r.ResourceVersion
	}
	r.mu.Unlock()

	defer r.workers.Wait()
	if r.ResyncPeriod > 0 {
		r.workers.Go(func() { r.resyncLoop(ctx) })
	}

	s := state{phase: phaseStart}
	for {
		next, wait := r.step(ctx, s)
		if ctx.Err() == nil && wait > 0 {
			t := r.Clock.NewTimer(wait)
			select {
			case <-t.C():
			case <-ctx.Done():
				t.Stop()
			}
		}
		if ctx.Err() != nil {
			if next.watcher != nil {
				r.closeWatch(next)
			}
			return
		}
		s = next
	}
}

func (r *Reflector) resyncLoop(ctx context.Context) {
	t := r.Clock.NewTimer(r.ResyncPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		if r.ShouldResync == nil || r.ShouldResync() {
			if err := r.Sink.Resync(); err != nil {
				r.report("resync", err)
				// A failed resync leaves the sink in doubt: end the watch so the
				// main loop relists (conformance 25).
				r.mu.Lock()
				r.resyncFailed = true
				w := r.current
				r.current = nil // stopped here, so closeWatch leaves it alone
				r.mu.Unlock()
				if w != nil {
					w.Stop()
				}
			}
		}
		t.Reset(r.ResyncPeriod)
	}
}

// phase is where the reflector's state machine stands.
type phase int

const (
	phaseStart     phase = iota // begin a list-and-watch cycle: choose how to sync
	phaseList                   // list page by page, then Replace
	phaseWatchList              // open a watch-list stream
	phaseWatch                  // open a watch at the last synced version
	phaseStream                 // read the open watch
)

func (p phase) String() string {
	return [...]string{"start", "list", "watch-list", "watch", "stream"}[p]
}

// state is one node of the state machine. watcher and the fields after it
// belong to phaseStream.
type state struct {
	phase   phase
	watcher httpwatch.Watcher
	opened  time.Time
	events  int
	// fromAny is set for a watch started at "" or "0": its synthetic ADDED
	// events are not ordered by resourceVersion (conformance 19).
	fromAny bool
	// initial collects a watch-list's initial events until the end bookmark;
	// nil once they are in the sink.
	initial map[string]*httpwatch.Object
	// quiet stops the warnings of a watch-list waiting for its bookmark.
	quiet func()
}

// step performs one transition and returns the next state and how long to
// wait before entering it.
func (r *Reflector) step(ctx context.Context, s state) (state, time.Duration) {
	switch s.phase {
	case phaseStart:
		r.mu.Lock()
		resume := r.lastRV != "" && !r.cycled
		r.cycled = true
		r.internalFirst, r.internalLast = time.Time{}, time.Time{} // each cycle gets a fresh window
		r.mu.Unlock()
		if resume {
			return state{phase: phaseWatch}, 0 // from a saved version, once
		}
		if r.useWatchList() {
			return state{phase: phaseWatchList}, 0
		}
		return state{phase: phaseList}, 0
	case phaseList:
		return r.list(ctx)
	case phaseWatchList:
		return r.openWatchList(ctx)
	case phaseWatch:
		return r.openWatch(ctx)
	case phaseStream:
		return r.stream(ctx, s)
	}
	panic(fmt.Sprintf("reflector: unknown phase %d", s.phase))
}
