package reflector

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

// Restore is a state saved by an earlier process, at Options.ResourceVersion,
// that the Sink is being filled with while Run starts: an informer's warm
// start (decision 32). The reflector opens the watch from that version at
// once, while the state loads, but hands the Sink nothing and lists nothing
// until Done is closed. The server confirms the state through that resumed
// watch (phaseConfirm): by its first reply, unless the reply ends the watch
// (an ERROR such as 410 Expired, which relists, so that what was deleted
// meanwhile leaves the Sink), or by staying open ConfirmAfter after its
// response without one. A state that failed to load is dropped with its
// watch, and the reflector lists.
type Restore struct {
	// Done is closed once the load has ended; Loaded then reports whether
	// the Sink holds the saved state.
	Done   <-chan struct{}
	Loaded func() bool
	// ConfirmAfter is how long the resumed watch must stay open after the
	// server's response, without a reply that ends it, to confirm the
	// state (0: its response alone does).
	ConfirmAfter time.Duration
	// Confirmed is called on Run's goroutine once the server has confirmed
	// the state, before any event of the watch reaches the Sink.
	Confirmed func()
}

// verdict is what a resumed watch has said of the restored state so far.
type verdict int

const (
	undecided verdict = iota // no reply yet, and its deadline is to come
	confirms                 // a reply that goes on, or a quiet deadline
	refutes                  // a reply that ends the watch: it proves nothing
)

// firstRead reads a watch's first reply on a goroutine of its own, so
// that the loop can wait for it beside a deadline and the restored state's
// load, and then read the rest of the watch itself.
type firstRead struct {
	done chan struct{} // closed once rep holds the reply
	rep  reply
}

func readFirst(w httpwatch.Watcher) *firstRead {
	f := &firstRead{done: make(chan struct{})}
	go func() {
		defer close(f.done)
		f.rep.ev, f.rep.err = w.Next()
	}()
	return f
}

// arrived reports whether the first reply is in.
func (f *firstRead) arrived() bool {
	select {
	case <-f.done:
		return true
	default:
		return false
	}
}

// confirm is phaseConfirm's step: the resumed watch is open, and the
// reflector waits for its verdict on the restored state and for the load
// (see Restore). It then goes on reading the same watch in phaseStream,
// the first reply first.
func (r *Reflector) confirm(ctx context.Context, s *state) time.Duration {
	if s.restoring && closed(r.Restore.Done) {
		s.restoring = false
		if !r.Restore.Loaded() {
			// Nothing of the watch may reach a Sink that lacks the state.
			s.closeWatch()
			s.unconfirmed = false
			s.enter(phaseStart)
			return 0
		}
	}
	if s.verdict == undecided {
		switch {
		case s.first.arrived() && s.first.rep.end():
			s.verdict = refutes
		case s.first.arrived() || !r.clock().Now().Before(s.confirmAt):
			s.verdict = confirms
		}
	}
	if s.verdict != undecided && !s.restoring {
		if s.verdict == confirms {
			s.unconfirmed = false
			r.Restore.Confirmed()
		}
		s.phase = phaseStream // the same watch, read on
		return 0
	}
	var first, loaded <-chan struct{}
	if s.verdict == undecided {
		first = s.first.done
	}
	if s.restoring {
		loaded = r.Restore.Done
	}
	select {
	case <-first:
	case <-loaded:
	case <-s.alarm.c():
		s.alarm.rang()
	case <-ctx.Done():
		s.closeWatch()
		s.enter(phaseWatch) // Run returns
	}
	return 0
}

// awaitRestore waits, before a list or a watch that is not confirming the
// restored state, until the state is loaded: the Sink must hold it before
// it hears anything else. It reports false if ctx ended first.
func (r *Reflector) awaitRestore(ctx context.Context, s *state) bool {
	if !s.restoring {
		return true
	}
	select {
	case <-r.Restore.Done:
	case <-ctx.Done():
		return false
	}
	s.restoring = false
	if !r.Restore.Loaded() {
		s.unconfirmed = false
	}
	return true
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
