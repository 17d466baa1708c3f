package apiserve

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// The bounds of a Log's history, as kube-apiserver's watch cache has them.
const (
	DefaultMinHistory = 100
	DefaultMaxHistory = 100 * 1024
	DefaultFresh      = 75 * time.Second
)

// Event is one change a History recorded, at its resourceVersion, with
// the object's state before it: a watch with selectors needs both to tell
// an object entering its selection from one leaving it. O is the
// holder's own object type; the core reads it through History.Match and
// History.Body.
type Event[O any] struct {
	Type   string // Added, Modified or Deleted
	RV     int64
	Object O // the state after the change; for Deleted the last state
	Prev   O // the state before the change; unused for Added
	at     time.Time
}

// Log is a bounded history of events in resourceVersion order, from
// which watches replay: what a watch cache keeps. Its bounds follow the
// real watch cache (decision 44): it holds between Min and Max events;
// when full, it doubles while its oldest event is younger than Fresh,
// halves once even its newest quarter is older than Fresh, and otherwise
// drops its oldest event for each new one. So it keeps at least Fresh of
// history unless that is more than Max events, and never fewer than Min.
//
// A Log is not safe for concurrent use: its holder guards it with the
// lock that guards the objects it describes. The zero value is an empty
// Log with the default bounds.
type Log[O any] struct {
	Min   int           // DefaultMinHistory when 0 (at most Max)
	Max   int           // DefaultMaxHistory when 0
	Fresh time.Duration // DefaultFresh when 0
	Clock clock.Clock   // tells each event's recording time; clock.Real when nil

	ring    []Event[O] // len is the capacity
	start   int        // index of the oldest event
	n       int
	dropped bool  // an event was dropped since the last Reset
	base    int64 // the version of the last Reset
	epoch   uint64
}

// TooOld is the 410 kube-apiserver's watch cache sends, as an ERROR
// event, for a watch from a version older than its history (floor, the
// oldest version it can replay from), and for a watcher its history
// outran.
func TooOld(rv, floor int64) *Error {
	return &Error{Code: http.StatusGone, Reason: "Expired", Message: fmt.Sprintf("too old resource version: %d (%d)", rv, floor)}
}

func (l *Log[O]) bounds() (lo, hi int, fresh time.Duration) {
	lo, hi, fresh = l.Min, l.Max, l.Fresh
	if hi <= 0 {
		hi = DefaultMaxHistory
	}
	if lo <= 0 {
		lo = DefaultMinHistory
	}
	if fresh <= 0 {
		fresh = DefaultFresh
	}
	return min(lo, hi), hi, fresh
}

func (l *Log[O]) at(i int) *Event[O] { return &l.ring[(l.start+i)%len(l.ring)] }

// Append records e, which must be newer than every event recorded.
func (l *Log[O]) Append(e Event[O]) {
	clk := l.Clock
	if clk == nil {
		clk = clock.Real
	}
	e.at = clk.Now()
	lo, hi, fresh := l.bounds()
	switch {
	case len(l.ring) == 0:
		l.resize(lo)
	case l.n == len(l.ring) && e.at.Sub(l.at(0).at) < fresh:
		l.resize(min(2*len(l.ring), hi))
	case l.n == len(l.ring) && e.at.Sub(l.at(l.n-len(l.ring)/4).at) > fresh:
		l.resize(max(len(l.ring)/2, lo))
	}
	if l.n == len(l.ring) {
		*l.at(0) = Event[O]{} // let the objects go
		l.start = (l.start + 1) % len(l.ring)
		l.n--
		l.dropped = true
	}
	*l.at(l.n) = e
	l.n++
}

// resize moves the events to a ring of capacity c, keeping the newest.
func (l *Log[O]) resize(c int) {
	if c == len(l.ring) {
		return
	}
	ring := make([]Event[O], c)
	keep := min(l.n, c)
	for i := range keep {
		ring[i] = *l.at(l.n - keep + i)
	}
	if keep < l.n {
		l.dropped = true
	}
	l.ring, l.start, l.n = ring, 0, keep
}

// Reset empties the history, which starts again at version rv, and
// starts a new epoch: every watch following the old one ends with a 410.
func (l *Log[O]) Reset(rv int64) {
	clear(l.ring)
	l.start, l.n, l.dropped, l.base = 0, 0, false, rv
	l.epoch++
}

// Floor is the oldest version a watch can replay from: the last Reset's,
// or, once events were dropped, the version just before the oldest kept.
func (l *Log[O]) Floor() int64 {
	if !l.dropped {
		return l.base
	}
	return l.at(0).RV - 1 // a drop leaves at least Min events
}

// Epoch counts the Resets.
func (l *Log[O]) Epoch() uint64 { return l.epoch }

// Len is how many events the Log holds.
func (l *Log[O]) Len() int { return l.n }

// Since appends to buf, oldest first, at most max of the events after
// version after, for a watch of the given epoch. A watch from before the
// Floor, or of an earlier epoch, gets TooOld.
func (l *Log[O]) Since(buf []Event[O], after int64, epoch uint64, max int) ([]Event[O], error) {
	if epoch != l.epoch || after < l.Floor() {
		return buf, TooOld(after, l.Floor())
	}
	i := sort.Search(l.n, func(i int) bool { return l.at(i).RV > after })
	for ; i < l.n && max > 0; i, max = i+1, max-1 {
		buf = append(buf, *l.at(i))
	}
	return buf, nil
}

// Back calls f for each event newer than rv, newest first, until f
// returns false: the way to undo events to see the state at rv.
func (l *Log[O]) Back(rv int64, f func(Event[O]) bool) {
	for i := l.n - 1; i >= 0 && l.at(i).RV > rv; i-- {
		if !f(*l.at(i)) {
			return
		}
	}
}
