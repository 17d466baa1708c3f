package reflector

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

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
}

// counters are the Stats as the loop writes them. Only Stats reads them:
// no decision of the reflector does, so they can never steer it.
type counters struct {
	lists, pages, items, watches, events, errors atomic.Int64
}

// report counts err, logs it as decision 20 says and hands it to OnError
// as a *SyncError.
func (r *Reflector) report(op Op, err error) {
	r.reportAs(op, err, routine(op, err))
}

// reportRoutine is report for an error the caller knows to be routine: a
// refused watch-list it replaces by a paged list.
func (r *Reflector) reportRoutine(op Op, err error) { r.reportAs(op, err, true) }

func (r *Reflector) reportAs(op Op, err error, routine bool) {
	r.stats.errors.Add(1)
	e := &SyncError{Resource: r.Name, Op: op, Err: err, Routine: routine}
	r.logFailure(e)
	if r.OnError != nil {
		r.OnError(e)
	}
}

// retry moves s to p and returns how long to wait before entering it: the
// server's Retry-After if err carries one, else the next step of Backoff.
// Retry-After leaves the steps alone, as upstream, where the request layer
// honours it before the reflector's backoff ever sees the error.
func (r *Reflector) retry(s *state, p phase, err error) time.Duration {
	s.enter(p)
	var se *httpwatch.StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, r.maxRetryAfter())
	}
	var d time.Duration
	d, s.backoff = r.Backoff.step(s.backoff, r.clock().Now(), r.random())
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
