package watchtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"

	"github.com/listwatch/listwatch/apiserve"
)

// watcher is one open watch as the server counts it: what it selects,
// the newest version its history has handed it, and how to end it. Its
// fields are guarded by the Server's lock.
type watcher struct {
	st    *store
	scope scope
	taken int64 // the version of the newest event handed to the core
	end   context.CancelFunc
	// bookmarks asks the core for bookmarks (SendBookmarks); a watch
	// whose buffer is full skips one.
	bookmarks chan struct{}
	ended     bool
}

// lagging reports whether more events of its selection wait for w than
// limit: a client that does not keep up, which the real server ends
// rather than slowing every writer down. s.mu is held.
func (w *watcher) lagging(limit int) bool {
	chs := w.st.changes
	n := 0
	for i := len(chs) - 1; i >= 0 && chs[i].rv() > w.taken; i-- {
		c := chs[i]
		before := c.typ == apiserve.Modified && w.scope.matches(c.prev)
		if _, _, ok := apiserve.Selected(c.typ, before, w.scope.matches(c.obj)); ok {
			if n++; n > limit {
				return true
			}
		}
	}
	return false
}

// endWatchLocked ends a watch: its handler finishes the response.
func (s *Server) endWatchLocked(w *watcher) {
	if w.ended {
		return
	}
	w.ended = true
	w.end()
	delete(w.st.watchers, w)
	s.open--
	close(s.watchers)
	s.watchers = make(chan struct{})
}

// SendBookmarks sends a BOOKMARK at the current resourceVersion to every
// open watch that allowed bookmarks, now, as the periodic ones are sent,
// after the events before it. A watch with WatchBuffer bookmarks not yet
// sent skips this one.
func (s *Server) SendBookmarks() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.stores {
		for w := range st.watchers {
			select {
			case w.bookmarks <- struct{}{}:
			default:
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

// serveWatch hands a watch to the serving core (decision 44), over the
// resource's store narrowed to the watch, counting it open once its
// start is fixed and playing the faults armed for it.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, st *store, sc scope, q apiserve.WatchQuery, table *apiserve.TableOutput) {
	if s.ExpiredWatchAsStatus && q.StartRV > 0 && q.SendInitialEvents == nil {
		s.mu.Lock()
		old := q.StartRV < s.floorOf(st)
		s.mu.Unlock()
		if old {
			apiserve.Expired("watch").Write(w)
			return
		}
	}
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	wt := &watcher{st: st, scope: sc, taken: q.StartRV, end: cancel, bookmarks: make(chan struct{}, s.WatchBuffer)}
	h := watchHistory{coreStore{s: s, st: st, sc: sc}, wt}
	out := &faultyWriter{ResponseWriter: w, rc: http.NewResponseController(w), s: s, cut: s.takeCut(), ctx: ctx}
	apiserve.ServeWatch(ctx, out, h, q, apiserve.WatchStream{
		Layout: st.res.layout(), Table: table, Clock: s.Clock,
		BookmarkEvery: -1, Bookmarks: wt.bookmarks, Started: func() { s.register(wt) },
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, open := st.watchers[wt]; open {
		s.endWatchLocked(wt)
	}
}

// register counts a watch open.
func (s *Server) register(wt *watcher) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		wt.end()
		return
	}
	// What it replays came before it counted; what it lags by starts here.
	wt.taken = max(wt.taken, s.rv)
	wt.st.watchers[wt] = struct{}{}
	s.open++
	close(s.watchers)
	s.watchers = make(chan struct{})
}

// watchHistory is a resource's store narrowed to one watch: the
// apiserve.History the core serves it from.
type watchHistory struct {
	coreStore
	w *watcher
}

func (h watchHistory) Now() (int64, uint64, <-chan struct{}) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.rv, 0, h.s.changed
}

func (h watchHistory) Since(buf []apiserve.Event[*object], after int64, _ uint64, limit int) ([]apiserve.Event[*object], error) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if floor := h.s.floorOf(h.st); after < floor {
		return buf, apiserve.Expired("watch") // etcd's words, as a compacted server's (fixture watch-too-old-rv.jsonl)
	}
	chs := h.st.changes
	i := sort.Search(len(chs), func(i int) bool { return chs[i].rv() > after })
	for ; i < len(chs) && limit > 0; i, limit = i+1, limit-1 {
		c := chs[i]
		buf = append(buf, apiserve.Event[*object]{Type: c.typ, RV: c.rv(), Object: c.obj, Prev: c.prev})
		h.w.taken = max(h.w.taken, c.rv())
	}
	return buf, nil
}

func (h watchHistory) Match(o *object) bool { return h.sc.matches(o) }

func (h watchHistory) Body(o *object) []byte { return o.body }

var errEnded = errors.New("watchtest: the watch was ended")

// faultyWriter writes a watch's response, and breaks or slows it where
// the faults armed say: each frame is a line.
type faultyWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	s       *Server
	cut     cut
	ctx     context.Context // done once the server ended the watch
	written int
	events  int
	flushed bool
}

// FlushError flushes, and drops the connection right after the headers
// for a cut at 0, as a network failure would.
func (f *faultyWriter) FlushError() error {
	err := f.rc.Flush()
	if !f.flushed && (f.cut.events == 0 || f.cut.bytes == 0) {
		panic(http.ErrAbortHandler)
	}
	f.flushed = true
	return err
}

func (f *faultyWriter) Write(b []byte) (int, error) {
	if f.ctx.Err() != nil {
		return 0, errEnded // an ended watch stops at once, events queued or not
	}
	end, cut := len(b), false
	if f.cut.bytes >= 0 && f.written+len(b) >= f.cut.bytes {
		end, cut = f.cut.bytes-f.written, true
	}
	if f.cut.events >= 0 {
		for i, n := 0, 0; i < end; i++ {
			if b[i] == '\n' {
				if n++; f.events+n >= f.cut.events {
					end, cut = i+1, true
					break
				}
			}
		}
	}
	if err := f.slowly(b[:end]); err != nil {
		return 0, err
	}
	if cut {
		panic(http.ErrAbortHandler) // drop the connection, as a network failure would
	}
	f.written += len(b)
	f.events += bytes.Count(b, []byte{'\n'})
	return len(b), nil
}

// slowly writes b in the pieces SlowWatches asks for, flushing each and
// pausing between two.
func (f *faultyWriter) slowly(b []byte) error {
	chunk, pause := f.s.slow()
	for len(b) > 0 {
		n := len(b)
		if chunk > 0 {
			n = min(n, chunk)
		}
		if _, err := f.ResponseWriter.Write(b[:n]); err != nil {
			return err
		}
		if err := f.rc.Flush(); err != nil {
			return err
		}
		if b = b[n:]; len(b) > 0 && pause != nil {
			pause()
		}
	}
	return nil
}
