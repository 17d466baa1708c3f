package reflector

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
)

// ErrVeryShortWatch reports a watch that the server closed cleanly within
// a second without delivering a single event: the server is probably
// unhealthy, so the reflector backs off and relists instead of hammering
// it (conformance 21). A watch the network cut so is resumed after a
// backoff instead, and reported as what cut it (decision 38).
var ErrVeryShortWatch = cause.New("very short watch", "watch closed within a second without an event")

// ErrUnexpectedKind reports a watch event carrying an object of another kind
// than the reflector expects (or a meta.k8s.io Table, which no cache can
// hold). The event is dropped; the watch goes on.
var ErrUnexpectedKind = cause.New("unexpected kind", "object of an unexpected kind")

// ErrNoInitialEventsEnd reports a watch-list stream that ended before the
// bookmark marking the end of the initial events.
var ErrNoInitialEventsEnd = cause.New("no initial-events-end", "watch-list stream ended before the initial-events-end bookmark")

// Op is what a reflector was doing when it met an error. Its String is the
// word used in error messages and logs.
type Op int

const (
	OpList       Op = iota + 1 // a paged list
	OpWatchList                // a watch-list stream, before its initial events ended
	OpWatchStart               // opening a watch
	OpWatch                    // reading a watch
	OpSink                     // handing what it learnt to the Sink
	OpResync                   // Sink.Resync
)

var opNames = [...]string{
	OpList:       "list",
	OpWatchList:  "watch-list",
	OpWatchStart: "watch start",
	OpWatch:      "watch",
	OpSink:       "sink",
	OpResync:     "resync",
}

func (o Op) String() string {
	if o > 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// SyncError is an error the reflector met and recovered from, reported
// through Reflector.OnError.
type SyncError struct {
	Resource string
	Op       Op
	Err      error
	// Routine marks an error that is part of normal operation: a watch cut
	// by the network, a version expired (410) and relisted, a watch-list the
	// server refused and a paged list replaced. Routine errors are logged at
	// Debug, and waits never return them (decision 20).
	Routine bool
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
	// PermanentErrors and RoutineErrors count the Errors that retrying
	// cannot cure (a permanent cause, decision 38) and those that are part of
	// normal operation (SyncError.Routine); the rest are transient.
	PermanentErrors, RoutineErrors int64
	// WatchEnds counts the watches that ended, by cause, but for those
	// Run's context or a Relist ended.
	WatchEnds WatchEnds
	// LastSync is when the server last showed the cache current: a full
	// sync completed, a watch delivered its first event, or the server
	// ended a watch cleanly. On a healthy reflector it is never older
	// than the longest watch timeout (2·MinWatchTimeout); zero before.
	LastSync time.Time
}

// WatchEnds counts ended watches by cause, for an operator to tell the
// routine (Timeout, Gone) from a network that loses them (Cut, Silent).
type WatchEnds struct {
	Timeout int64 // the server ended it cleanly, as at its timeoutSeconds
	Gone    int64 // 410: the version is compacted away; a relist follows
	// Silent: nothing heard for WatchIdleTimeout (httpwatch.ErrWatchIdle,
	// or ErrNoBookmarks before the server was heard to send any), or the
	// connection was found dead (httpwatch.ErrConnectionLost); decision 36.
	Silent int64
	Cut    int64 // the connection broke: a reset, an unexpected EOF
	// Failed: any other error event, a stream that cannot be decoded,
	// a watch that ended at once (ErrVeryShortWatch).
	Failed int64
}

// counters are the Stats as the loop writes them. Only Stats reads them:
// no decision of the reflector does, so they can never steer it.
type counters struct {
	lists, pages, items, watches, events, errors atomic.Int64
	permanent, routine                           atomic.Int64
	timeout, gone, silent, cut, failed           atomic.Int64
	lastSync                                     atomic.Int64 // UnixNano; 0 before
}

// stats returns the counters as Stats.
func (c *counters) stats() Stats {
	s := Stats{
		Lists:           c.lists.Load(),
		ListPages:       c.pages.Load(),
		ListedItems:     c.items.Load(),
		Watches:         c.watches.Load(),
		Events:          c.events.Load(),
		Errors:          c.errors.Load(),
		PermanentErrors: c.permanent.Load(),
		RoutineErrors:   c.routine.Load(),
		WatchEnds: WatchEnds{Timeout: c.timeout.Load(), Gone: c.gone.Load(),
			Silent: c.silent.Load(), Cut: c.cut.Load(), Failed: c.failed.Load()},
	}
	if ns := c.lastSync.Load(); ns != 0 {
		s.LastSync = time.Unix(0, ns)
	}
	return s
}

// count counts e by class and, for an error that ended a watch, by the
// bucket of its cause.
func (c *counters) count(e *SyncError) {
	c.errors.Add(1)
	why := cause.Of(e.Err)
	switch {
	case e.Routine:
		c.routine.Add(1)
	case why.Class == cause.Permanent:
		c.permanent.Add(1)
	}
	if e.Op != OpWatch || errors.Is(e.Err, ErrUnexpectedKind) {
		return // not the end of a watch
	}
	switch why.Ends {
	case cause.Silent:
		c.silent.Add(1)
	case cause.Gone:
		c.gone.Add(1)
	case cause.Cut:
		c.cut.Add(1)
	case cause.Timeout:
		c.timeout.Add(1)
	default:
		c.failed.Add(1)
	}
}

// synced notes that the server showed the cache current at now.
func (c *counters) synced(now time.Time) { c.lastSync.Store(now.UnixNano()) }

// report counts err, logs it as decision 20 says and hands it to OnError
// as a *SyncError.
func (r *Reflector) report(op Op, err error) {
	r.reportAs(op, err, routine(op, err))
}

// reportRoutine is report for an error the caller knows to be routine: a
// refused watch-list it replaces by a paged list.
func (r *Reflector) reportRoutine(op Op, err error) { r.reportAs(op, err, true) }

func (r *Reflector) reportAs(op Op, err error, routine bool) {
	e := &SyncError{Resource: r.Name, Op: op, Err: err, Routine: routine}
	r.stats.count(e)
	r.logFailure(e)
	if r.OnError != nil {
		r.OnError(e)
	}
}

// retry moves s to p and returns how long to wait before entering it: the
// server's Retry-After if err carries one, else the next step of Backoff.
// Retry-After leaves the steps alone, as upstream, where the request layer
// honours it before the reflector's backoff ever sees the error.
//
// An answer of the server (a status: a 410, a 5xx) after steps the network
// climbed starts the sequence over: the server is there again, and what
// it asks for (after a restart, the relist its 410 orders) waits one first
// step, not the outage's last, up to a minute (conformance 8, decision 38).
// Its own answers climb the steps again.
func (r *Reflector) retry(s *state, p phase, err error) time.Duration {
	s.enter(p)
	var se *httpwatch.StatusError
	answered := errors.As(err, &se)
	if answered && se.RetryAfter > 0 {
		return min(se.RetryAfter, r.maxRetryAfter())
	}
	if answered && s.backoff.network {
		s.backoff = progress{}
	}
	var d time.Duration
	d, s.backoff = r.Backoff.step(s.backoff, r.clock().Now(), r.random())
	s.backoff.network = !answered && err != nil && cause.Of(err).Then == cause.Resume
	return d
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
