package reflector

import (
	"context"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

func (r *Reflector) watchTimeout() int64 {
	lo := r.MinWatchTimeout
	if lo < 5*time.Minute {
		lo = 5 * time.Minute // conformance 10: shorter minimums are ignored
	}
	return int64((lo + time.Duration(r.Random()*float64(lo))) / time.Second)
}

// watch opens a watch with bookmarks and a random timeout (conformance 10,
// 11). A watch opened as ctx ended is closed again at once.
func (r *Reflector) watch(ctx context.Context, opts httpwatch.ListOptions) (httpwatch.Watcher, error) {
	opts.AllowWatchBookmarks = true
	opts.TimeoutSeconds = r.watchTimeout()
	w, err := r.Source.Watch(ctx, opts)
	if ctx.Err() != nil {
		if w != nil {
			w.Stop()
		}
		return nil, ctx.Err()
	}
	return w, err
}

func (r *Reflector) openWatch(ctx context.Context, s *state) time.Duration {
	opts := r.baseOptions()
	opts.ResourceVersion = s.lastRV
	wctx, cancel := r.watchContext(ctx)
	w, err := r.watch(wctx, opts)
	if ctx.Err() != nil {
		cancel()
		return 0
	}
	if err != nil {
		relisted := wctx.Err() != nil // a Relist ended it: list now
		cancel()
		if relisted {
			s.enter(phaseStart)
			return 0
		}
		r.report(OpWatchStart, err)
		if httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err) {
			return r.retry(s, phaseWatch, err) // conformance 22
		}
		return r.retry(s, phaseStart, err)
	}
	r.opened(wctx, cancel, s, w, opts.ResourceVersion == "" || opts.ResourceVersion == "0", false)
	return 0
}

func (r *Reflector) openWatchList(ctx context.Context, s *state) time.Duration {
	opts := r.baseOptions()
	opts.ResourceVersion = s.lastRV
	if s.rvUnavailable {
		opts.ResourceVersion = ""
	}
	opts.ResourceVersionMatch = "NotOlderThan"
	opts.SendInitialEvents = true
	wctx, cancel := r.watchContext(ctx)
	w, err := r.watch(wctx, opts)
	if ctx.Err() != nil {
		cancel()
		return 0
	}
	if err != nil {
		relisted := wctx.Err() != nil // a Relist ended it: list now
		cancel()
		if relisted {
			s.enter(phaseStart)
			return 0
		}
		switch {
		case httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err):
			r.report(OpWatchList, err)
			return r.retry(s, phaseWatchList, err)
		case opts.ResourceVersion != "" && versionUnavailable(err):
			r.report(OpWatchList, err)
			s.rvUnavailable = true
		default:
			// The paged list that replaces it says whether anything is wrong.
			r.reportRoutine(OpWatchList, err)
			s.enter(phaseList) // conformance 30: fall back to a list
		}
		return 0
	}
	r.opened(wctx, cancel, s, w, false, true)
	return 0
}

// initialWait is how long a watch-list may go without an event before the
// reflector warns that it is still waiting for the end of the initial
// events (conformance 29). There is no other limit than the watch timeout.
const initialWait = 10 * time.Second

// opened moves s to phaseStream on w, opened with ctx, which cancel ends.
func (r *Reflector) opened(ctx context.Context, cancel context.CancelFunc, s *state, w httpwatch.Watcher, fromAny, initial bool) {
	r.stats.watches.Add(1)
	s.enter(phaseStream)
	// Without a resync period nor a watch-list to watch over, nothing can
	// fall due while this watch is open: the loop may block in Next itself.
	s.feed = startFeed(ctx, cancel, w, s.resyncAt.IsZero() && !initial)
	s.opened = r.Clock.Now()
	s.fromAny = fromAny
	if initial {
		s.initial = map[string]*raw.Object{}
		s.warnAt = s.opened.Add(initialWait)
	}
}

// feedAhead is how many events a feed reads before the loop takes them.
// Reading ahead lets the next events decode while the loop hands the last
// one to the sink; the bound keeps a slow sink from buffering a whole
// stream.
const feedAhead = 256

// A feed owns an open watch. Next blocks, yet a stream step may also have
// to hear the alarm, so a feed reads in one of two ways, chosen when the
// watch opens:
//
//   - direct: no deadline can fall due while the watch is open (no resync
//     period, no watch-list waiting for its end). The loop calls Next
//     itself, and the end of the watch's context (Run's, or a Relist)
//     stops the watcher, which unblocks it. An event then costs no
//     goroutine hand-off.
//   - read ahead: a reader goroutine turns Next into a queue the loop can
//     wait on beside the alarm. The reader appends every reply to queue as
//     soon as Next returns it; the loop takes the whole queue at once and
//     hands its replies out one per step, so events cross between
//     goroutines in batches whenever the loop is the slower side, and a
//     quiet stream delays no event.
//
// The loop alone calls close, once per watch, and the watcher is stopped
// exactly once, by close or by the end of the watch's context, whichever
// comes first.
type feed struct {
	w httpwatch.Watcher

	direct bool
	// unhook cancels the stop the feed arranged on its context; false means
	// the stop has already begun. cancel releases that context.
	unhook  func() bool
	cancel  context.CancelFunc
	stopped chan struct{} // closed once the stop on the context is done

	mu    sync.Mutex
	queue []reply // read, not yet taken by the loop

	ready chan struct{} // the queue stopped being empty (buffered: 1)
	room  chan struct{} // the loop took the queue (buffered: 1)
	stop  chan struct{} // closed by close: the reader must not wait
	done  chan struct{} // closed when the reader has returned

	batch []reply // taken by the loop; only the loop touches it
	next  int     // index in batch of the next reply to hand out
}

// reply is what one Next returned.
type reply struct {
	ev  httpwatch.Event
	err error
}

func startFeed(ctx context.Context, cancel context.CancelFunc, w httpwatch.Watcher, direct bool) *feed {
	f := &feed{w: w, direct: direct, cancel: cancel, stopped: make(chan struct{})}
	f.unhook = context.AfterFunc(ctx, func() {
		w.Stop()
		close(f.stopped)
	})
	if direct {
		return f
	}
	f.ready = make(chan struct{}, 1)
	f.room = make(chan struct{}, 1)
	f.stop = make(chan struct{})
	f.done = make(chan struct{})
	go f.read()
	return f
}

func (f *feed) read() {
	defer close(f.done)
	for {
		ev, err := f.w.Next()
		f.mu.Lock()
		f.queue = append(f.queue, reply{ev, err})
		n := len(f.queue)
		f.mu.Unlock()
		if n == 1 {
			signal(f.ready)
		}
		if err != nil || ev.Type == httpwatch.Error {
			return // the stream is over: nothing more to read
		}
		for n >= feedAhead {
			select {
			case <-f.room:
			case <-f.stop:
				return
			}
			f.mu.Lock()
			n = len(f.queue)
			f.mu.Unlock()
		}
	}
}

// take returns the next reply the reader has, if any.
func (f *feed) take() (reply, bool) {
	if f.next == len(f.batch) {
		clear(f.batch) // let the objects go; the slice goes back to the reader
		f.mu.Lock()
		f.batch, f.queue = f.queue, f.batch[:0]
		f.mu.Unlock()
		f.next = 0
		if len(f.batch) == 0 {
			return reply{}, false
		}
		signal(f.room)
	}
	r := f.batch[f.next]
	f.next++
	return r, true
}

// signal leaves a token in c unless one is there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// close stops the watch and waits for its reader. Stop unblocks a pending
// Next (the Watcher contract), so the wait is as short as the stream's
// teardown.
func (f *feed) close() {
	if f.unhook() {
		f.w.Stop()
	} else {
		<-f.stopped // so that the watch is stopped when close returns
	}
	f.cancel()
	if !f.direct {
		close(f.stop)
		<-f.done
	}
}
