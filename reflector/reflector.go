package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
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

func (r *Reflector) useWatchList() bool {
	if !r.WatchList {
		return false
	}
	if wl, ok := r.Source.(WatchListReporter); ok && !wl.SupportsWatchList() {
		return false // conformance 31
	}
	return true
}

func (r *Reflector) baseOptions() httpwatch.ListOptions {
	return httpwatch.ListOptions{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
}

// listVersion is the resourceVersion a list should read (conformance 12).
func (r *Reflector) listVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.rvUnavailable:
		return ""
	case r.lastRV == "":
		return "0"
	default:
		return r.lastRV
	}
}

// pageSize applies client-go's page size rules (conformance 15).
func (r *Reflector) pageSize(rv string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.PageSize > 0:
		return r.PageSize
	case r.paginated:
		return 500
	case rv != "" && rv != "0":
		return -1 // one unpaginated read, servable from the watch cache (see ListAll)
	default:
		return 500
	}
}

func (r *Reflector) list(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.listVersion()
	opts.Limit = r.pageSize(opts.ResourceVersion)
	first := true
	page, err := httpwatch.ListAll(ctx, r.Source, opts, func(p *httpwatch.Page) {
		if first && opts.ResourceVersion == "0" && p.Continue != "" {
			r.mu.Lock()
			r.paginated = true
			r.mu.Unlock()
		}
		first = false
		r.stats.pages.Add(1)
	})
	if ctx.Err() != nil {
		return state{phase: phaseList}, 0
	}
	if err != nil {
		r.report("list", err)
		if opts.ResourceVersion != "" && versionUnavailable(err) {
			r.setVersionUnavailable()
			return state{phase: phaseList}, 0
		}
		return state{phase: phaseStart}, r.backoff(err)
	}
	if err := r.Sink.Replace(page.Items, page.ResourceVersion); err != nil {
		r.report("sink", err)
		return state{phase: phaseStart}, r.backoff(err)
	}
	r.synced(page.ResourceVersion, len(page.Items))
	return state{phase: phaseWatch}, 0
}

func (r *Reflector) synced(rv string, items int) {
	r.mu.Lock()
	r.lastRV = rv
	r.rvUnavailable = false
	r.mu.Unlock()
	r.stats.lists.Add(1)
	r.stats.items.Add(int64(items))
}

func (r *Reflector) setVersionUnavailable() {
	r.mu.Lock()
	r.rvUnavailable = true
	r.mu.Unlock()
}

// versionUnavailable reports a list or watch-list refused because the
// requested version is compacted away or not yet known to the server.
func versionUnavailable(err error) bool {
	return httpwatch.IsExpired(err) || httpwatch.IsGone(err) || httpwatch.IsResourceVersionTooLarge(err)
}

func (r *Reflector) watchTimeout() int64 {
	lo := r.MinWatchTimeout
	if lo < 5*time.Minute {
		lo = 5 * time.Minute // conformance 10: shorter minimums are ignored
	}
	return int64((lo + time.Duration(r.Random()*float64(lo))) / time.Second)
}

// watch opens a watch with bookmarks and a random timeout (conformance 10,
// 11). A watch opened as ctx ended is closed again at once.
func (r *Reflector) watch(ctx context.Context, opts httpwatch.ListOptions) (httpwatch.Watcher, error) {
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.Source.Watch(ctx, opts)
	if ctx.Err() != nil {
		if w != nil {
			w.Stop()
		}
		return nil, ctx.Err()
	}
	return w, err
}

func (r *Reflector) openWatch(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.LastSyncResourceVersion()
	w, err := r.watch(ctx, opts)
	if ctx.Err() != nil {
		return state{phase: phaseWatch}, 0
	}
	if err != nil {
		r.report("watch start", err)
		if httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err) {
			return state{phase: phaseWatch}, r.backoff(err) // conformance 22
		}
		return state{phase: phaseStart}, r.backoff(err)
	}
	return r.opened(w, opts.ResourceVersion == "" || opts.ResourceVersion == "0", false), 0
}

func (r *Reflector) openWatchList(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.LastSyncResourceVersion()
	if r.listVersion() == "" {
		opts.ResourceVersion = ""
	}
	opts.ResourceVersionMatch = "NotOlderThan"
	opts.SendInitialEvents = true
	w, err := r.watch(ctx, opts)
	if ctx.Err() != nil {
		return state{phase: phaseWatchList}, 0
	}
	if err != nil {
		r.report("watch-list", err)
		switch {
		case httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err):
			return state{phase: phaseWatchList}, r.backoff(err)
		case opts.ResourceVersion != "" && versionUnavailable(err):
			r.setVersionUnavailable()
			return state{phase: phaseWatchList}, 0
		default:
			return state{phase: phaseList}, 0 // conformance 30: fall back to a list
		}
	}
	s := r.opened(w, false, true)
	s.quiet = r.warnWhileWaiting(ctx)
	return s, 0
}

// initialWait is how long a watch-list may go without an event before the
// reflector warns that it is still waiting for the end of the initial
// events (conformance 29). There is no other limit than the watch timeout.
const initialWait = 10 * time.Second

// warnWhileWaiting logs a warning for every initialWait without an event
// until the returned function is called or ctx ends.
func (r *Reflector) warnWhileWaiting(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	r.workers.Go(func() {
		t := r.Clock.NewTimer(initialWait)
		defer t.Stop()
		seen := r.stats.events.Load()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C():
			}
			if n := r.stats.events.Load(); n == seen {
				r.Logger.Warn("watch-list: still waiting for the initial-events-end bookmark",
					"resource", r.Name, "quiet", initialWait)
			} else {
				seen = n
			}
			t.Reset(initialWait)
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

func (r *Reflector) opened(w httpwatch.Watcher, fromAny, initial bool) state {
	r.stats.watches.Add(1)
	r.mu.Lock()
	r.current = w
	r.resyncFailed = false
	r.mu.Unlock()
	s := state{phase: phaseStream, watcher: w, opened: r.Clock.Now(), fromAny: fromAny}
	if initial {
		s.initial = map[string]*httpwatch.Object{}
	}
	return s
}

// closeWatch stops the open watch, unless a failed resync already did, and
// says whether a resync failed while it was open. Whoever takes the watch
// from r.current stops it, so Stop is called exactly once.
func (r *Reflector) closeWatch(s state) (resyncFailed bool) {
	r.mu.Lock()
	mine := r.current == s.watcher
	if mine {
		r.current = nil
	}
	resyncFailed = r.resyncFailed
	r.mu.Unlock()
	if mine {
		s.watcher.Stop()
	}
	if s.quiet != nil {
		s.quiet()
	}
	return resyncFailed
}

func (r *Reflector) stream(ctx context.Context, s state) (state, time.Duration) {
	ev, err := s.watcher.Next()
	if err != nil || ev.Type == httpwatch.Error {
		resyncFailed := r.closeWatch(s)
		if ctx.Err() != nil {
			return state{}, 0 // closed: nothing left for Run to stop
		}
		if resyncFailed {
			return state{phase: phaseStart}, r.backoff(nil)
		}
		if err == nil {
			err = ev.Err
			return r.watchFailed(s, err)
		}
		return r.watchEnded(s, err)
	}
	s.events++
	r.stats.events.Add(1)
	if err := r.checkKind(ev); err != nil {
		r.report("watch", err) // conformance 18: dropped, not fatal
		return s, 0
	}
	if s.initial != nil {
		return r.collectInitial(s, ev)
	}
	var sinkErr error
	switch ev.Type {
	case httpwatch.Added:
		sinkErr = r.Sink.Add(ev.Object)
	case httpwatch.Modified:
		sinkErr = r.Sink.Update(ev.Object)
	case httpwatch.Deleted:
		sinkErr = r.Sink.Delete(ev.Object)
	case httpwatch.Bookmark:
		if b, ok := r.Sink.(BookmarkSink); ok {
			b.Bookmark(ev.Object.ResourceVersion())
		}
	}
	if sinkErr != nil {
		r.report("sink", sinkErr)
	}
	// Synthetic ADDED events of a watch from "" or "0" come in no particular
	// version order; only later events move the version (conformance 19).
	if !(s.fromAny && ev.Type == httpwatch.Added) {
		s.fromAny = false
		r.setVersion(ev.Object.ResourceVersion())
	}
	return s, 0
}

func (r *Reflector) checkKind(ev httpwatch.Event) error {
	if ev.Type == httpwatch.Bookmark {
		return nil
	}
	kind := ev.Object.Kind()
	if kind == "Table" && strings.HasPrefix(ev.Object.APIVersion(), "meta.k8s.io/") ||
		r.ExpectedKind != "" && kind != "" && kind != r.ExpectedKind {
		return fmt.Errorf("%s event for %s %s: %w (want %q)", ev.Type, kind, objectKey(ev.Object), ErrUnexpectedKind, r.ExpectedKind)
	}
	return nil
}

func (r *Reflector) setVersion(rv string) {
	if rv == "" {
		return
	}
	r.mu.Lock()
	r.lastRV = rv
	r.mu.Unlock()
}

// collectInitial gathers a watch-list's initial events and hands them to the
// sink as one Replace at the end bookmark (conformance 28).
func (r *Reflector) collectInitial(s state, ev httpwatch.Event) (state, time.Duration) {
	switch ev.Type {
	case httpwatch.Added, httpwatch.Modified:
		s.initial[objectKey(ev.Object)] = ev.Object
	case httpwatch.Deleted:
		delete(s.initial, objectKey(ev.Object))
	case httpwatch.Bookmark:
		if ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() != "true" {
			return s, 0
		}
		items := make([]*httpwatch.Object, 0, len(s.initial))
		for _, o := range s.initial {
			items = append(items, o)
		}
		rv := ev.Object.ResourceVersion()
		if err := r.Sink.Replace(items, rv); err != nil {
			r.report("sink", err)
			r.closeWatch(s)
			return state{phase: phaseList}, r.backoff(err)
		}
		r.synced(rv, len(items))
		s.initial = nil
		s.quiet()
	}
	return s, 0
}

func objectKey(o *httpwatch.Object) string {
	if o.Namespace() == "" {
		return o.Name()
	}
	return o.Namespace() + "/" + o.Name()
}

// watchEnded handles a stream that stopped without an ERROR event: cleanly,
// or cut by the network.
func (r *Reflector) watchEnded(s state, err error) (state, time.Duration) {
	cut := httpwatch.IsProbableEOF(err)
	if !cut {
		// A stream we cannot decode any further: relist to be sure nothing is
		// lost (upstream turns this into a synthetic InternalError).
		r.report("watch", err)
		return state{phase: phaseStart}, r.backoff(err)
	}
	if !errors.Is(err, io.EOF) {
		r.report("watch", err)
	}
	if s.initial != nil {
		r.report("watch-list", ErrNoInitialEventsEnd)
		return state{phase: phaseList}, 0 // conformance 30
	}
	if s.events == 0 && r.Clock.Since(s.opened) < time.Second {
		r.report("watch", ErrVeryShortWatch)
		return state{phase: phaseStart}, r.backoff(ErrVeryShortWatch) // conformance 21
	}
	return state{phase: phaseWatch}, 0 // conformance 20
}

// watchFailed handles an ERROR event.
func (r *Reflector) watchFailed(s state, err error) (state, time.Duration) {
	r.report("watch", err)
	if s.initial != nil {
		if versionUnavailable(err) && r.LastSyncResourceVersion() != "" && r.listVersion() != "" {
			r.setVersionUnavailable()
			return state{phase: phaseWatchList}, 0
		}
		return state{phase: phaseList}, 0
	}
	switch {
	case httpwatch.IsTooManyRequests(err):
		return state{phase: phaseWatch}, r.backoff(err) // conformance 23
	case httpwatch.IsInternalError(err) && r.retryInternalError():
		return state{phase: phaseWatch}, 0
	}
	// 410 and everything else: relist at the last synced version
	// (conformance 13); only that list's own 410 drops to "".
	return state{phase: phaseStart}, r.backoff(err)
}

// internalErrorQuiet is how long without an InternalError ends a run of
// them: the next one opens a fresh retry window (upstream's one minute).
const internalErrorQuiet = time.Minute

// retryInternalError records a watch ended by an InternalError and reports
// whether it falls within MaxInternalErrorRetryDuration of the first of its
// run (conformance 23). A run ends after internalErrorQuiet without one, or
// with the list-and-watch cycle.
func (r *Reflector) retryInternalError() bool {
	if r.MaxInternalErrorRetryDuration <= 0 {
		return false
	}
	now := r.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.internalLast) >= internalErrorQuiet {
		r.internalFirst = now
	}
	r.internalLast = now
	return now.Sub(r.internalFirst) <= r.MaxInternalErrorRetryDuration
}

// backoff returns how long to wait after err: the server's Retry-After if
// it gave one, else the next step of Backoff. Retry-After leaves the steps
// alone, as upstream, where the request layer honours it before the
// reflector's backoff ever sees the error.
func (r *Reflector) backoff(err error) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var se *httpwatch.StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, r.maxRetryAfter())
	}
	return r.Backoff.Next(r.Clock.Now(), r.Random())
}

// defaultMaxRetryAfter bounds a server's Retry-After when Backoff has no cap.
const defaultMaxRetryAfter = 30 * time.Second

// maxRetryAfter is the longest the reflector honours a server's
// Retry-After: like client-go, never longer than its own backoff maximum,
// so one answer cannot park the reflector for a day.
func (r *Reflector) maxRetryAfter() time.Duration {
	if r.Backoff.Cap > 0 {
		return r.Backoff.Cap
	}
	return defaultMaxRetryAfter
}

func (r *Reflector) report(op string, err error) {
	r.stats.errors.Add(1)
	e := &SyncError{Resource: r.Name, Op: op, Err: err}
	r.Logger.Debug("reflector error", "resource", r.Name, "op", op, "err", err)
	if r.OnError != nil {
		r.OnError(e)
	}
}
