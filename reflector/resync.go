package reflector

import (
	"time"

	"github.com/listwatch/listwatch/clock"
)

// due acts on the deadlines of the open watch that have come: a resync
// (conformance 25) and a look at a watch-list still waiting for its end
// bookmark (conformance 29).
func (r *Reflector) due(s *state) time.Duration {
	now := r.clock().Now()
	if s.initial != nil && !now.Before(s.warnAt) {
		if s.events == s.warnSeen {
			r.logger().Warn("watch-list: still waiting for the initial-events-end bookmark",
				"resource", r.Name, "quiet", initialWait)
		}
		s.warnAt, s.warnSeen = now.Add(initialWait), s.events
	}
	if s.resyncAt.IsZero() || now.Before(s.resyncAt) {
		return 0
	}
	s.resyncAt = time.Time{}
	if r.ResyncPeriod > 0 {
		s.resyncAt = now.Add(r.ResyncPeriod)
	}
	if r.ShouldResync != nil && !r.ShouldResync() {
		return 0
	}
	err := r.Sink.Resync()
	r.flush()
	if err != nil {
		r.report(OpResync, err)
		// A failed resync leaves the sink in doubt: end the watch and
		// relist (conformance 25).
		s.closeWatch()
		return r.retry(s, phaseStart, nil)
	}
	return 0
}

// alarm is the one timer of a Run. Run sets it for the state's next
// deadline after every step, so a stream step blocked on a quiet watch
// still wakes for a resync. Ringing is only a wake-up: the step reads the
// clock and the state to see what fell due, so a stale ring is harmless.
//
// The timer is made at the first deadline, not before: a Run without one
// never holds a timer, so on a fake clock a pending timer always means the
// reflector waits for it.
type alarm struct {
	clock clock.Clock
	timer clock.Timer // nil until the first deadline
	at    time.Time   // the deadline the timer is set for; zero: none
}

func newAlarm(c clock.Clock) *alarm { return &alarm{clock: c} }

// set makes the alarm ring at at, unless it already will.
func (a *alarm) set(at time.Time) {
	if a == nil || at.Equal(a.at) {
		return
	}
	a.at = at
	switch {
	case at.IsZero():
		if a.timer != nil {
			a.timer.Stop()
		}
	case a.timer == nil:
		a.timer = a.clock.NewTimer(at.Sub(a.clock.Now()))
	default:
		a.timer.Reset(at.Sub(a.clock.Now()))
	}
}

// rang records that the timer fired, so the next set arms it again.
func (a *alarm) rang() { a.at = time.Time{} }

// c is the channel the alarm rings on; nil, which never delivers, while
// there is no timer.
func (a *alarm) c() <-chan time.Time {
	if a == nil || a.timer == nil {
		return nil
	}
	return a.timer.C()
}

func (a *alarm) stop() {
	if a.timer != nil {
		a.timer.Stop()
	}
}
