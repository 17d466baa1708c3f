package reflector

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/raw"
)

// The reflector is a state machine: Run calls step with a state and gets
// the next one and how long to wait before entering it. Everything a
// decision depends on is in the state (or in the Reflector's configuration,
// which does not change while Run runs), so a test can hand step any state
// and check the one that comes back.

// phase is where the reflector's state machine stands.
type phase int

const (
	phaseStart     phase = iota // begin a list-and-watch cycle: choose how to sync
	phaseList                   // list page by page, then Replace
	phaseWatchList              // open a watch-list stream
	phaseWatch                  // open a watch at the last synced version
	phaseConfirm                // wait for a resumed watch to confirm a restored state
	phaseStream                 // read the open watch
)

func (p phase) String() string {
	return [...]string{"start", "list", "watch-list", "watch", "confirm", "stream"}[p]
}

// state is one node of the state machine: its phase, what the reflector
// remembers across phases, and the open watch in phaseConfirm and
// phaseStream.
type state struct {
	phase phase
	memory
	watching

	// alarm wakes a stream step when a deadline of the state comes. It
	// belongs to Run, not to any state; nil (in tests) never rings.
	alarm *alarm
}

// memory is what the reflector has learnt and carries from one phase to
// the next. It holds only values, so tests compare it whole.
type memory struct {
	lastRV string // the version the Sink is synced to
	// rvUnavailable: the server said lastRV is gone, so the next list (or
	// watch-list) reads "" (conformance 12, 30).
	rvUnavailable bool
	// paginated: the first list, at "0", came back in pages, so the watch
	// cache is off and relists keep paging (conformance 15).
	paginated bool
	// cycled: a list-and-watch cycle has begun, so a saved resourceVersion
	// is no longer resumed from (decision 10).
	cycled bool
	// resyncAt is when the next resync is due; zero without ResyncPeriod.
	resyncAt time.Time
	// internal bounds the current run of InternalError watch ends, which
	// MaxInternalErrorRetryDuration limits (conformance 23).
	internal window
	backoff  progress
	// restoring: the Sink is being filled with a Restore's state, so
	// nothing may reach it and nothing is listed until that is done.
	restoring bool
	// unconfirmed: the Sink holds (or soon) a restored state the server has
	// not confirmed; a watch from its version is confirmed first
	// (phaseConfirm). A full sync makes it moot.
	unconfirmed bool
}

// window is a run of events between its first and last.
type window struct{ first, last time.Time }

// watching is the open watch of phaseStream; the zero value elsewhere.
type watching struct {
	feed   feed // the watcher and whatever reads it
	opened time.Time
	events int // events read, bookmarks and dropped ones included
	// fromAny is set for a watch started at "" or "0": its synthetic ADDED
	// events are not ordered by resourceVersion (conformance 19).
	fromAny bool
	// initial collects a watch-list's initial events until the end bookmark;
	// nil once they are in the sink.
	initial map[string]*raw.Object
	// warnAt is when to look again whether a watch-list waiting for its end
	// bookmark has been quiet since warnSeen events (conformance 29).
	warnAt   time.Time
	warnSeen int
	// first, confirmAt and verdict are phaseConfirm's: the first reply
	// being read, the deadline for it, and what it said (see Restore).
	first     *firstRead
	confirmAt time.Time
	verdict   verdict
}

// to returns s moved to phase p, keeping what it remembers. Leaving
// phaseStream drops the watch, which the caller has closed.
func (s state) to(p phase) state {
	return state{phase: p, memory: s.memory, alarm: s.alarm}
}

// enter is to in place: the transitions work on one state, which step
// copies once, because a state is copied for every event.
func (s *state) enter(p phase) {
	s.phase = p
	s.watching = watching{}
}

// deadline is the next time a stream step must act on without an event:
// a resync, or a look at a quiet watch-list; in phaseConfirm, the end of
// the wait for a first reply. Zero: none.
func (s *state) deadline() time.Time {
	if s.phase == phaseConfirm {
		if s.verdict != undecided {
			return time.Time{}
		}
		return s.confirmAt
	}
	d := s.resyncAt
	if s.initial != nil && (d.IsZero() || s.warnAt.Before(d)) {
		d = s.warnAt
	}
	return d
}

// closeWatch stops the open watch, if any, and waits for whatever reads it.
func (s *state) closeWatch() {
	if s.feed != nil {
		s.feed.close()
		s.feed = nil
	}
}

// initialState is where Run begins.
func (r *Reflector) initialState() state {
	s := state{phase: phaseStart}
	s.lastRV = r.ResourceVersion
	if r.Restore != nil {
		s.restoring = true
		s.unconfirmed = s.lastRV != ""
	}
	if r.ResyncPeriod > 0 {
		s.resyncAt = r.clock().Now().Add(r.ResyncPeriod)
	}
	return s
}

// step performs one transition and returns the next state and how long to
// wait before entering it.
func (r *Reflector) step(ctx context.Context, s state) (state, time.Duration) {
	var wait time.Duration
	switch s.phase {
	case phaseStart:
		r.start(&s)
	case phaseList:
		wait = r.list(ctx, &s)
	case phaseWatchList:
		wait = r.openWatchList(ctx, &s)
	case phaseWatch:
		wait = r.openWatch(ctx, &s)
	case phaseConfirm:
		wait = r.confirm(ctx, &s)
	case phaseStream:
		wait = r.stream(ctx, &s)
	default:
		panic(fmt.Sprintf("reflector: unknown phase %d", s.phase))
	}
	return s, wait
}

// start begins a list-and-watch cycle. Each cycle decides afresh how to
// sync, so a server that learnt to stream is used at the next relist.
func (r *Reflector) start(s *state) {
	relist := r.takeRelist() // the list this cycle begins answers it
	resume := s.lastRV != "" && !s.cycled && !relist
	s.cycled = true
	s.internal = window{} // each cycle gets a fresh window
	switch {
	case resume:
		s.enter(phaseWatch) // from a saved version, once
	case r.useWatchList():
		s.enter(phaseWatchList)
	default:
		s.enter(phaseList)
	}
}

func (r *Reflector) useWatchList() bool {
	return !r.PagedList && r.Source.Info().WatchList // conformance 31
}
