package reflector

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/raw"
)

// Sink receives everything a Reflector learns from the server.
// *delta.FIFO[*Object] satisfies it. The reflector calls it from the
// goroutine running Run, one call at a time; a Sink shared with a consumer
// must still be safe for concurrent use.
type Sink interface {
	Add(obj *raw.Object) error
	Update(obj *raw.Object) error
	Delete(obj *raw.Object) error
	Replace(items []*raw.Object, resourceVersion string) error
	Resync() error
}

// Flusher is implemented by a Sink that holds part of its work back while
// changes flow, as a delta.FIFO with WakeOnFlush holds back waking its
// consumer, so that it is woken once per batch of events rather than once
// per event. After handing the Sink anything, the reflector calls Flush,
// on Run's goroutine, before it may wait for the server: before the watch
// waits for the network, as its httpwatch.Watcher announces (NotifyRead),
// before waiting for a watch read on another goroutine, when a watch
// closes, after Replace and Resync.
type Flusher interface {
	Flush()
}

// Progresser is implemented by a Sink that wants to know when the server
// moves the version without a change: the reflector calls Progress with a
// watch bookmark's resourceVersion, in order with the Sink's other calls.
// A cache served onwards needs it to answer for that version exactly
// (decision 43).
type Progresser interface {
	Progress(resourceVersion string)
}

// A Reflector keeps a Sink equal to the server's state of one resource: it
// lists (page by page, or as a watch-list stream), then watches from the
// list's resourceVersion, resuming after every clean end of a watch and
// relisting when the server says the version is gone. It follows
// client-go's reflector (docs/behaviour.md, items 8–31 and decision 1),
// but for the network (decision 38):
//
//   - The first list asks for resourceVersion "0" (the watch cache); relists
//     ask for the last synced version, so the cache never goes back in time.
//     Only a list that itself fails with Expired, Gone or "too large
//     resourceVersion" falls back to "" (a consistent read).
//   - A watch that ends cleanly is reopened at once from the last version seen
//     (bookmarks included). A 410 relists at the last synced version. A watch
//     that the network fails to open or cuts at once (refused, reset, DNS,
//     TLS-handshake and i/o timeouts, a connection found dead), or that the
//     server answers 429, is retried from the same version after a backoff,
//     for as long as that lasts, without a relist (decision 38: client-go
//     retries only a refused connection so).
//   - Every other failure, what the server says, waits one step of Backoff
//     (800 ms doubling to 30 s with full jitter, reset after 2 minutes)
//     before relisting.
//   - An error carrying the server's Retry-After waits that long instead of
//     a step (and takes none), but never longer than Backoff.Cap (30 s).
//   - Unless PagedList is set (by default, as upstream since 1.35) the sync is a
//     watch with sendInitialEvents; a server that refuses it, or a stream that
//     fails before the initial-events-end bookmark, falls back to a paged
//     list in the same cycle. Every relist begins a new cycle (as upstream's
//     ListAndWatch does), which tries a watch-list again: a refusal is not
//     remembered, so a server upgraded to stream is used at the next relist.
//   - A resync falls due every ResyncPeriod while a watch is open; one that
//     falls due while the reflector lists or backs off happens as soon as
//     the next watch opens (upstream resyncs only around its watch, too).
//
// Unlike client-go, every error, including those upstream only logs, reaches
// OnError as a *SyncError (decision 6). The log says what is wrong once,
// not once per retry (decision 20): the first failure of a kind at Warn,
// or at Error with what to do when retrying cannot cure it
// (a permanent cause, decision 38), repeats summarised with their count at most
// every 5 minutes, a recovery at Info, routine errors (SyncError.Routine)
// at Debug.
//
// Set the exported fields before Run; New fills the defaults.
type Reflector struct {
	Source httpwatch.ListerWatcher
	Sink   Sink
	// Options tune how the reflector lists and watches.
	Options

	// ResyncPeriod, if positive, calls Sink.Resync that often, when
	// ShouldResync (if set) agrees.
	ResyncPeriod time.Duration
	ShouldResync func() bool

	// OnError sees every error the reflector recovers from.
	OnError func(error)

	// Restore, if set, is the saved state at ResourceVersion that the Sink
	// is being filled with as Run starts (decision 32).
	Restore *Restore

	// Clock, Logger and Random are the reflector's time, log and source of
	// randomness; nil means the default New sets: clock.Real, slog.Default
	// and math/rand/v2's Float64.
	Clock  clock.Clock
	Logger *slog.Logger
	// Random returns numbers in [0, 1) for jitter and watch timeouts.
	Random func() float64

	started atomic.Bool
	// published is the loop's last synced version, published for
	// LastSyncResourceVersion; the loop itself reads its state.
	published struct {
		sync.Mutex
		rv string
	}
	stats counters
	// failures is what the log has said about failures (decision 20).
	failures faillog.Tracker
	relist   relistRequest
}

// Options tune how a Reflector lists and watches: the part of its
// configuration that carries no wiring, so that an informer can take it as
// a value (listwatch.Informer.Reflector) without exposing its pipeline.
// The zero value is client-go's defaults (watch-list on, the default
// backoff, watch timeouts of 5 to 10 minutes) and a silent watch
// restarted after DefaultWatchIdleTimeout (client-go has none): a literal
// names only what differs.
type Options struct {
	// Name names the resource in errors and logs; "" (and New) name it
	// after the source's resource (NameOf).
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

	// PagedList syncs through a paged list instead of a watch-list stream
	// (the default, as upstream's since 1.35).
	PagedList bool

	// Backoff spaces out the retries after failures; its zero value is
	// DefaultBackoff.
	Backoff Backoff

	// MinWatchTimeout is the shortest server-side watch timeout; each watch
	// asks for a random timeout in [MinWatchTimeout, 2·MinWatchTimeout).
	// Below 5 minutes (0 included) it is 5 minutes, as upstream's.
	MinWatchTimeout time.Duration

	// WatchIdleTimeout is how long a watch may hear nothing from the
	// server, not a byte, while the server is taken to break the silence
	// of a quiet watch with bookmarks: every watch asks its source for it
	// (httpwatch.ListOptions.IdleTimeout), whose one watchdog ends a
	// watch that waited that long for the server. The watch is then taken
	// to sit on a silent connection (a black-holed path, a wedged server):
	// it is logged at Warn and resumed from its resourceVersion, without a
	// relist. An httpwatch.Client holds every watch to it from its start,
	// its first included, until a watch that heard no bookmark has shown
	// that the server sends none (its watch cache off); the bound is then
	// the watch's own timeout plus 30 s until a bookmark comes in time.
	// DefaultWatchIdleTimeout if 0; negative sets no bound at all
	// (decision 36).
	WatchIdleTimeout time.Duration

	// MaxInternalErrorRetryDuration is how long a watch ending with an
	// InternalError is reopened without a relist, counted from the first of
	// a run of them; a minute without one, or a relist, starts a new run.
	// 0 always relists.
	MaxInternalErrorRetryDuration time.Duration
}

// DefaultWatchIdleTimeout is Options.WatchIdleTimeout's default. The API
// server's watch cache sends a quiet watch that allows them a bookmark
// every minute, the first within two minutes of the watch's opening
// (decision 36 has the measurements), so two and a half minutes of
// silence is more than two missed bookmarks, and a silent watch is found
// 2m30s after its last byte.
const DefaultWatchIdleTimeout = 150 * time.Second

// New returns a Reflector reading source into sink with the default
// Options, named after the source's resource (NameOf), the real clock and
// slog.Default.
func New(source httpwatch.ListerWatcher, sink Sink) *Reflector {
	return &Reflector{
		Source:  source,
		Sink:    sink,
		Options: Options{Name: NameOf(source.Info())},
		Clock:   clock.Real,
		Logger:  slog.Default(),
		Random:  rand.Float64,
	}
}

// NameOf is the name of what a source reads, as logs and errors say it:
// its resource as resource.version.group ("pods.v1",
// "deployments.v1.apps"), with " in " and the namespace when it reads one,
// or "objects" when it does not say.
func NameOf(info httpwatch.SourceInfo) string {
	res := info.Resource
	switch {
	case res.Resource == "":
		return "objects"
	case res.Namespace != "":
		return res.String() + " in " + res.Namespace
	}
	return res.String()
}

// LastSyncResourceVersion returns the resourceVersion the Sink is synced to:
// the version of the last list, event or bookmark. It is "" before the first
// sync.
func (r *Reflector) LastSyncResourceVersion() string {
	r.published.Lock()
	defer r.published.Unlock()
	return r.published.rv
}

func (r *Reflector) publish(rv string) {
	r.published.Lock()
	r.published.rv = rv
	r.published.Unlock()
}

// Stats returns a snapshot of the reflector's counters.
func (r *Reflector) Stats() Stats { return r.stats.stats() }

// Run keeps the Sink in sync until ctx is done. It returns promptly after
// cancellation, with every stream closed. Calling Run again returns at once.
//
// Run does its work on the calling goroutine, one step of the state machine
// at a time. While a watch with a deadline is open (a resync period, a
// watch-list awaiting its end) it starts one more, to read it (see feed),
// and stops that one before opening the next watch and before returning.
// Resync and the watch-list warnings are deadlines of the loop, not
// goroutines of their own.
func (r *Reflector) Run(ctx context.Context) {
	if !r.started.CompareAndSwap(false, true) {
		r.logger().Warn("reflector already running", "resource", r.Name)
		return
	}
	if r.Name == "" {
		r.Name = NameOf(r.Source.Info())
	}
	s := r.initialState()
	s.alarm = newAlarm(r.clock())
	defer s.alarm.stop()
	published := s.lastRV
	r.publish(published)
	for {
		var wait time.Duration
		s, wait = r.step(ctx, s)
		s.alarm.set(s.deadline())
		if s.lastRV != published {
			published = s.lastRV
			r.publish(published)
		}
		if ctx.Err() == nil && wait > 0 {
			r.sleep(ctx, wait)
		}
		if ctx.Err() != nil {
			s.closeWatch()
			return
		}
	}
}

// flusher returns the Sink's Flush, or nil if it has none.
func (r *Reflector) flusher() func() {
	if f, ok := r.Sink.(Flusher); ok {
		return f.Flush
	}
	return nil
}

// flush hands on what the Sink holds back, if it does.
func (r *Reflector) flush() {
	if f, ok := r.Sink.(Flusher); ok {
		f.Flush()
	}
}

func (r *Reflector) clock() clock.Clock {
	if r.Clock == nil {
		return clock.Real
	}
	return r.Clock
}

func (r *Reflector) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.Default()
	}
	return r.Logger
}

func (r *Reflector) random() float64 {
	if r.Random == nil {
		return rand.Float64()
	}
	return r.Random()
}

// sleep waits d on the reflector's clock, or until ctx ends.
func (r *Reflector) sleep(ctx context.Context, d time.Duration) {
	t := r.clock().NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
	case <-ctx.Done():
	}
}
