package watchtest

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/listwatch/listwatch/apiserve"
)

// watcher is one open watch: what it selects and the events waiting to be
// written to it. Its fields other than ch and done are guarded by the
// Server's lock.
type watcher struct {
	st        *store
	scope     scope
	bookmarks bool
	// after is the resourceVersion the watch starts from: it gets no event
	// at or below it.
	after int64
	ch    chan frame
	done  chan struct{} // closed when the server ends the watch
	ended bool
}

// frame is one event to write.
type frame struct {
	typ        string
	obj        *object         // ADDED, MODIFIED, DELETED
	rv         int64           // BOOKMARK
	initialEnd bool            // BOOKMARK: the k8s.io/initial-events-end one
	err        *apiserve.Error // ERROR
}

// translate turns a change into what this watch sees, like the real watch
// cache: an object that starts matching the selectors arrives as ADDED, one
// that stops matching leaves as DELETED.
func (w *watcher) translate(c *change) (frame, bool) {
	if c.rv() <= w.after {
		return frame{}, false
	}
	before := c.typ == apiserve.Modified && w.scope.matches(c.prev)
	typ, old, ok := apiserve.Selected(c.typ, before, w.scope.matches(c.obj))
	switch {
	case !ok:
		return frame{}, false
	case old:
		return frame{typ: typ, obj: c.prevNow()}, true
	}
	return frame{typ: typ, obj: c.obj}, true
}

// offer queues f without blocking and reports whether there was room.
// stopped reports whether the server ended the watch.
func (w *watcher) stopped() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

func (w *watcher) offer(f frame) bool {
	select {
	case w.ch <- f:
		return true
	default:
		return false
	}
}

// endWatchLocked ends a watch: its handler finishes the response.
func (s *Server) endWatchLocked(w *watcher) {
	if w.ended {
		return
	}
	w.ended = true
	close(w.done)
	delete(w.st.watchers, w)
	s.open--
	close(s.watchers)
	s.watchers = make(chan struct{})
}

// SendBookmarks sends a BOOKMARK at the current resourceVersion to every
// open watch that allowed bookmarks, now, as the periodic ones are sent. A
// watch whose buffer is full skips this one.
func (s *Server) SendBookmarks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		for w := range st.watchers {
			if w.bookmarks && s.rv >= w.after {
				w.offer(frame{typ: apiserve.Bookmark, rv: s.rv})
			}
		}
	}
}

// CloseWatches ends every open watch at once with a clean end of stream, as
// an API server restarting gracefully does. Clients are expected to watch
// again from the last resourceVersion they saw. For a crash instead, see
// CloseClientConnections.
func (s *Server) CloseWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		for w := range st.watchers {
			s.endWatchLocked(w)
		}
	}
}

// OpenWatches returns how many watch streams are open.
func (s *Server) OpenWatches() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

// WaitForWatches blocks until at least n watch streams are open, so a test
// can change objects knowing a client is watching. Once a watch counts as
// open, every later change reaches it.
func (s *Server) WaitForWatches(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		open, changed := s.open, s.watchers
		s.mu.Unlock()
		if open >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("watchtest: waiting for %d open watches, have %d: %w", n, open, ctx.Err())
		}
	}
}

// watchRequest is a parsed watch: where it starts and what it selects.
type watchRequest struct {
	scope     scope
	rv        string // as given
	startRV   int64  // rv parsed, 0 for "" and "0"
	initial   *bool  // sendInitialEvents, nil when absent
	bookmarks bool
	timeout   int64 // seconds, 0 for none
	table     *apiserve.TableOutput
}

// serveWatch streams events: what the watch replays first, then every change
// as it happens, until the watch ends, times out or the client goes away.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, st *store, wr watchRequest) {
	ctx := req.Context()
	c := s.takeCut()
	var failure *apiserve.Error
	if wr.sendInitial() && wr.startRV > 0 {
		if cur, ok := s.waitForRV(ctx, wr.startRV); !ok {
			failure = apiserve.TooLarge(wr.startRV, cur)
		}
	}
	wt, initial, failure, ok := s.register(st, wr, failure)
	if !ok {
		return // the server is closed
	}
	if failure != nil {
		if failure.Code == http.StatusGone && s.ExpiredWatchAsStatus {
			failure.Write(w)
			return
		}
		s.startStream(w, st, c).write(frame{typ: apiserve.Failed, err: failure})
		return
	}
	defer func() {
		s.mu.Lock()
		s.endWatchLocked(wt)
		s.mu.Unlock()
	}()
	out := s.startStream(w, st, c)
	out.table = wr.table
	for _, f := range initial {
		if wt.stopped() || !out.write(f) {
			return
		}
	}
	var timeout <-chan time.Time
	if wr.timeout > 0 {
		t := s.Clock.NewTimer(time.Duration(wr.timeout) * time.Second)
		defer t.Stop()
		timeout = t.C()
	}
	for !wt.stopped() { // an ended watch stops at once, even with events queued
		select {
		case f := <-wt.ch:
			if !out.write(f) {
				return
			}
		case <-wt.done:
			return
		case <-timeout:
			return
		case <-ctx.Done():
			return
		}
	}
}

func (wr watchRequest) sendInitial() bool { return wr.initial != nil && *wr.initial }

// register decides under the lock what the watch replays and, unless it
// fails, registers it, so no change falls between the replay and the live
// events. ok is false once the server is closed.
func (s *Server) register(st *store, wr watchRequest, failure *apiserve.Error) (wt *watcher, initial []frame, _ *apiserve.Error, ok bool) {
	wt = &watcher{st: st, scope: wr.scope, bookmarks: wr.bookmarks, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, nil, false
	}
	switch {
	case failure != nil:
	case wr.sendInitial() || (wr.initial == nil && wr.startRV == 0):
		// The state now as ADDED events, then changes from now on. The
		// end-of-initial-events bookmark goes to watch-list requests and,
		// as a real server does, to legacy watches from "0".
		items, _, _ := st.snapshot(wr.scope, s.rv, "", 0)
		initial = make([]frame, 0, len(items)+1)
		for _, o := range items {
			initial = append(initial, frame{typ: apiserve.Added, obj: o})
		}
		if wr.bookmarks && (wr.sendInitial() || wr.rv == "0") {
			initial = append(initial, frame{typ: apiserve.Bookmark, rv: s.rv, initialEnd: true})
		}
		wt.after = s.rv
	case wr.startRV == 0: // sendInitialEvents=false from "" or "0": only what comes next
		wt.after = s.rv
	case wr.startRV < s.floorOf(st):
		failure = apiserve.Expired("watch")
	default:
		wt.after = wr.startRV
		i := sort.Search(len(st.changes), func(i int) bool { return st.changes[i].rv() > wr.startRV })
		for _, c := range st.changes[i:] {
			if f, ok := wt.translate(c); ok {
				initial = append(initial, f)
			}
		}
	}
	if failure != nil {
		return nil, nil, failure, true
	}
	wt.ch = make(chan frame, s.WatchBuffer)
	st.watchers[wt] = struct{}{}
	s.open++
	close(s.watchers)
	s.watchers = make(chan struct{})
	return wt, initial, nil, true
}

// stream writes the frames of one watch response, and breaks it where a
// cut says.
type stream struct {
	s       *Server
	w       http.ResponseWriter
	rc      *http.ResponseController
	st      *store
	cut     cut
	written int
	events  int
	buf     []byte
	// table, when set, sends each object as a one-row Table, the column
	// definitions only in the first.
	table *apiserve.TableOutput
}

// startStream sends the headers of a watch response at once, as the real
// server does, so a client knows the watch is established.
func (s *Server) startStream(w http.ResponseWriter, st *store, c cut) *stream {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	out := &stream{s: s, w: w, rc: http.NewResponseController(w), st: st, cut: c}
	_ = out.rc.Flush()
	if c.events == 0 || c.bytes == 0 {
		panic(http.ErrAbortHandler) // drop the connection, as a network failure would
	}
	return out
}

// write sends one frame and flushes it. It reports false once the client
// is gone.
func (o *stream) write(f frame) bool {
	o.buf = appendFrame(o.buf[:0], o.st, f, o.table)
	b := o.buf
	if o.cut.bytes >= 0 && o.written+len(b) >= o.cut.bytes {
		n := o.cut.bytes - o.written
		_, _ = o.w.Write(b[:n])
		_ = o.rc.Flush()
		panic(http.ErrAbortHandler)
	}
	chunk, pause := o.s.slow()
	for len(b) > 0 {
		n := len(b)
		if chunk > 0 {
			n = min(n, chunk)
		}
		if _, err := o.w.Write(b[:n]); err != nil {
			return false
		}
		if err := o.rc.Flush(); err != nil {
			return false
		}
		b = b[n:]
		if len(b) > 0 && pause != nil {
			pause()
		}
	}
	o.written += len(o.buf)
	o.events++
	if o.cut.events >= 0 && o.events >= o.cut.events {
		panic(http.ErrAbortHandler)
	}
	return true
}

// appendFrame appends one watch event as the serving core writes it.
func appendFrame(b []byte, st *store, f frame, t *apiserve.TableOutput) []byte {
	switch f.typ {
	case apiserve.Failed:
		return apiserve.AppendError(b, f.err)
	case apiserve.Bookmark:
		return apiserve.AppendBookmark(b, st.prefix, f.rv, f.initialEnd)
	}
	return apiserve.AppendEvent(b, f.typ, st.prefix, f.obj.body, f.obj.rv, t)
}
