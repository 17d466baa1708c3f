package apiserve

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/tidwall/gjson"
)

// DefaultBookmarkEvery is how often a watch that allows bookmarks gets
// one, as kube-apiserver's watch cache sends them.
const DefaultBookmarkEvery = time.Minute

// preDeadline is how long before its deadline a watch gets its last
// bookmark, as the real watch cache sends it, so that a client
// reconnects from as late a version as possible.
const preDeadline = 2 * time.Second

// batch is how many events a watch takes from its History per call, and
// how many initial events it writes between flushes.
const batch = 256

// History is a Store whose changes a watch can follow, narrowed, as a
// View is, to what one request selects: the Store answers the state a
// watch starts from, the History the events after it.
type History[O any] interface {
	Store
	// Now is the version reached, the history's epoch (it changes when
	// the history starts again and every watch must end), and a channel
	// closed when any of these moves or an event is recorded.
	Now() (rv int64, epoch uint64, moved <-chan struct{})
	// Since appends to buf, oldest first, at most max events after
	// version after (Log.Since), or answers TooOld.
	Since(buf []Event[O], after int64, epoch uint64, max int) ([]Event[O], error)
	// Match reports whether the request selects an object.
	Match(O) bool
	// Body is an object's JSON as held, with or without the layout's
	// kind and apiVersion in front (Layout.Prefix).
	Body(O) []byte
}

// WatchQuery is a watch's parameters, checked by CheckWatchOptions.
type WatchQuery struct {
	ResourceVersion   string // as given
	StartRV           int64  // ResourceVersion parsed; 0 for "" and "0"
	SendInitialEvents *bool  // nil when absent
	AllowBookmarks    bool
	Timeout           time.Duration // timeoutSeconds; 0 for none
}

// WatchStream is how watches of one resource are written. The zero
// value of each timing is its default.
type WatchStream struct {
	Layout Layout
	// Table, when set, sends each object as a one-row Table, the column
	// definitions in the first only, as the real server does for
	// kubectl get --watch.
	Table *TableOutput
	Clock clock.Clock // clock.Real when nil
	// BookmarkEvery is how often a watch that allows bookmarks gets one;
	// DefaultBookmarkEvery when 0, and none periodic when negative (a
	// server with a schedule of its own, Bookmarks): the one 2 s before
	// the deadline still comes, as the real server sends it.
	BookmarkEvery time.Duration
	// Bookmarks, when set, asks with each value received for a bookmark
	// now, if the watch allows them: a server's own schedule (a test
	// server's SendBookmarks).
	Bookmarks <-chan struct{}
	// Started, when set, is called once the watch's start is fixed,
	// before its headers: from then on every event reaches it.
	Started func()
}

// ServeWatch answers a watch as kube-apiserver's watch cache does
// (decision 44): a 200 stream whose headers go once its start is fixed,
// a failure from there on being an ERROR event. It replays first what
// the watch starts from: for "" and "0" and with sendInitialEvents=true
// the state as ADDED events (then, for "0" or sendInitialEvents with
// bookmarks allowed, the k8s.io/initial-events-end bookmark), for N the events after N, or TooOld if the history no
// longer holds them. Then each event as recorded, translated for the
// selection (Selected), the objects' bytes as held; bookmarks about
// every BookmarkEvery and 2 s before the deadline, at the version the
// watcher has received, never ahead; until the timeout, the client's
// leaving, or a 410 when the history outruns the watcher or starts again.
//
// sendInitialEvents=true from a version the store has not reached waits
// as Store.WaitFor does, then ends with TooLarge; a watch without it from
// such a version gets the events after it once they come, as the real
// server's does.
func ServeWatch[O any](ctx context.Context, w http.ResponseWriter, h History[O], q WatchQuery, s WatchStream) {
	out := &watchOut{w: w, rc: http.NewResponseController(w), prefix: s.Layout.Prefix(), table: s.Table}
	st := start(ctx, h, q)
	if st.fail == nil && s.Started != nil {
		s.Started()
	}
	// The headers go once the watch's start is fixed, as the real
	// server's do: a client that has them gets every later event.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if st.fail != nil {
		out.error(st.fail)
		return
	}
	for i, it := range st.items {
		out.event(Added, it.Body)
		if i%batch == batch-1 && !out.flush() {
			return
		}
	}
	if st.end {
		out.bookmark(st.pos, true)
	}
	if !out.flush() {
		return
	}
	follow(ctx, h, q, s, out, st.pos, st.epoch)
}

// begin is where a watch starts: the version its events follow, the
// epoch it belongs to, the state it replays first and whether the
// initial-events-end bookmark follows it; or why it cannot start.
type begin struct {
	pos   int64
	epoch uint64
	items []Item
	end   bool
	fail  *Error
}

func start[O any](ctx context.Context, h History[O], q WatchQuery) begin {
	explicit := q.SendInitialEvents != nil && *q.SendInitialEvents
	if explicit && q.StartRV > 0 {
		if cur, ok := h.WaitFor(ctx, q.StartRV); !ok {
			return begin{fail: TooLarge(q.StartRV, cur)}
		}
	}
	cur, epoch, _ := h.Now()
	switch {
	case explicit || q.SendInitialEvents == nil && q.StartRV == 0:
	case q.StartRV == 0: // sendInitialEvents=false: only what comes next
		return begin{pos: cur, epoch: epoch}
	default: // the history answers whether it holds what follows
		return begin{pos: q.StartRV, epoch: epoch}
	}
	b := begin{epoch: epoch, end: q.AllowBookmarks && (explicit || q.ResourceVersion == "0")}
	h.Read(func(v View) {
		b.pos = v.ResourceVersion()
		b.items, _, _ = v.List(b.pos, "", 0)
	})
	return b
}

// follow writes the events after pos as they come, and the bookmarks.
func follow[O any](ctx context.Context, h History[O], q WatchQuery, s WatchStream, out *watchOut, pos int64, epoch uint64) {
	sch := newSchedule(s, q)
	defer sch.stop()
	var evs []Event[O]
	due := 0 // bookmarks to send once caught up with what came before them
	for {
		cur, _, moved := h.Now() // before Since: no event falls between
		var err error
		if evs, err = h.Since(evs[:0], pos, epoch, batch); err != nil {
			var e *Error
			if !errors.As(err, &e) {
				e = &Error{Code: http.StatusInternalServerError, Reason: "InternalError", Message: err.Error()}
			}
			out.error(e)
			return
		}
		for _, ev := range evs {
			change(out, h, ev)
			pos = ev.RV
		}
		caughtUp := len(evs) < batch
		if caughtUp {
			pos = max(pos, cur)                  // what it has received is the version reached
			for ; due > 0 && pos <= cur; due-- { // a watch from a future version has received nothing
				out.bookmark(pos, false)
			}
			due = 0
		}
		if !out.flush() {
			return
		}
		if !caughtUp {
			continue
		}
		select {
		case <-moved:
		case <-sch.asked:
			due++
		case <-sch.timer:
			due++
			sch.next()
		case <-sch.timeout:
			return
		case <-ctx.Done():
			return
		}
	}
}

// schedule is when a watch gets its bookmarks and ends.
type schedule struct {
	clk      clock.Clock
	every    time.Duration
	deadline time.Time
	timeout  <-chan time.Time
	t, bt    clock.Timer
	timer    <-chan time.Time // the watch's own bookmarks
	asked    <-chan struct{}
}

func newSchedule(s WatchStream, q WatchQuery) *schedule {
	sch := &schedule{clk: s.Clock, every: s.BookmarkEvery}
	if sch.clk == nil {
		sch.clk = clock.Real
	}
	if sch.every == 0 {
		sch.every = DefaultBookmarkEvery
	}
	if q.Timeout > 0 {
		sch.deadline = sch.clk.Now().Add(q.Timeout)
		sch.t = sch.clk.NewTimer(q.Timeout)
		sch.timeout = sch.t.C()
	}
	if !q.AllowBookmarks {
		return sch
	}
	sch.asked = s.Bookmarks
	if d, ok := nextBookmark(sch.clk.Now(), sch.deadline, sch.every); ok {
		sch.bt = sch.clk.NewTimer(d)
		sch.timer = sch.bt.C()
	}
	return sch
}

// next sets the timer for the watch's next bookmark, if any.
func (sch *schedule) next() {
	sch.timer = nil
	if d, ok := nextBookmark(sch.clk.Now(), sch.deadline, sch.every); ok {
		sch.bt.Reset(d)
		sch.timer = sch.bt.C()
	}
}

func (sch *schedule) stop() {
	if sch.t != nil {
		sch.t.Stop()
	}
	if sch.bt != nil {
		sch.bt.Stop()
	}
}

// nextBookmark is how long until a watch's next bookmark: every (none
// periodic when it is negative), or sooner to land 2 s before its
// deadline; none once that has passed.
func nextBookmark(now, deadline time.Time, every time.Duration) (time.Duration, bool) {
	if deadline.IsZero() {
		return every, every > 0
	}
	d := deadline.Add(-preDeadline).Sub(now)
	if every > 0 {
		d = min(d, every)
	}
	return d, d > 0
}

// watchOut writes the frames of one watch response.
type watchOut struct {
	w      http.ResponseWriter
	rc     *http.ResponseController
	prefix []byte
	table  *TableOutput
	buf    []byte
	gone   bool
}

// change writes what ev is to this watch's selection (Selected): one
// leaving it is DELETED with its last state there, at the event's
// version, as the real watch cache sends it.
func change[O any](o *watchOut, h History[O], ev Event[O]) {
	before := ev.Type == Modified && h.Match(ev.Prev)
	typ, old, ok := Selected(ev.Type, before, h.Match(ev.Object))
	switch {
	case !ok:
	case old:
		o.event(typ, WithVersion(h.Body(ev.Prev), ev.RV))
	default:
		o.event(typ, h.Body(ev.Object))
	}
}

func (o *watchOut) event(typ string, body []byte) {
	var rv int64
	if o.table != nil { // a row's metadata carries the object's version
		rv = gjson.GetBytes(body, "metadata.resourceVersion").Int()
	}
	o.buf = AppendEvent(o.buf, typ, o.prefix, body, rv, o.table)
}

func (o *watchOut) bookmark(rv int64, end bool) {
	o.buf = AppendBookmark(o.buf, o.prefix, rv, end)
}

// error writes an ERROR event: the watch ends.
func (o *watchOut) error(e *Error) {
	o.buf = AppendError(o.buf, e)
	o.flush()
}

// flush writes what is buffered; false once the client is gone.
func (o *watchOut) flush() bool {
	if o.gone {
		return false
	}
	if len(o.buf) > 0 {
		if _, err := o.w.Write(o.buf); err != nil {
			o.gone = true
			return false
		}
		o.buf = o.buf[:0]
	}
	if err := o.rc.Flush(); err != nil {
		o.gone = true
		return false
	}
	return true
}

// WithVersion is obj with its metadata.resourceVersion set to rv: a
// splice, not a re-encoding.
func WithVersion(obj []byte, rv int64) []byte {
	old := gjson.GetBytes(obj, "metadata.resourceVersion")
	if old.Index <= 0 {
		return obj
	}
	out := make([]byte, 0, len(obj)+8)
	out = append(out, obj[:old.Index]...)
	out = strconv.AppendQuote(out, strconv.FormatInt(rv, 10))
	return append(out, obj[old.Index+len(old.Raw):]...)
}
