package reflector

import (
	"context"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

// A feed owns an open watch and hands its replies to the loop, one per
// stream step. Next blocks, yet a stream step may also have to hear the
// alarm, so there are two feeds, chosen when the watch opens:
//
//   - directFeed, when no deadline can fall due while the watch is open
//     (no resync period, no watch-list waiting for its end): the loop calls
//     Next itself and adds no goroutine hand-off of its own.
//   - readAhead otherwise: a reader goroutine turns Next into a queue the
//     loop waits on beside the alarm.
//
// Both have the Sink's Flush called before the loop may wait (see
// Flusher): the watcher calls it (httpwatch.Watcher.NotifyRead) when the
// loop reads it, the feed before it waits for its reader.
type feed interface {
	// next returns the watch's next reply. ok is false when alarm rang or
	// ctx ended first; the watch is then still open.
	next(ctx context.Context, alarm <-chan time.Time) (rep reply, ok bool)
	// close stops the watch and waits for whatever reads it. The loop
	// calls it once per watch.
	close()
}

// reply is what one Next returned.
type reply struct {
	ev  httpwatch.Event
	err error
}

// end reports whether the stream is over after rep.
func (rep reply) end() bool { return rep.err != nil || rep.ev.Type == httpwatch.Error }

// newFeed starts the feed of w, opened with ctx, which cancel ends. flush,
// if not nil, is the Sink's Flush: the feed calls it before the loop may
// wait for w (see Flusher) and once w is closed. first, if not nil, is
// reading w's first reply (phaseConfirm): the feed hands it out first and
// reads w only after it.
func newFeed(ctx context.Context, cancel context.CancelFunc, w httpwatch.Watcher, direct bool, flush func(), first *firstRead) feed {
	if direct {
		f := &directFeed{stopper: newStopper(ctx, cancel, w), flush: flush, first: first}
		if first == nil {
			f.notify()
		}
		return f
	}
	f := &readAhead{
		stopper: newStopper(ctx, cancel, w),
		first:   first,
		flush:   flush,
		ready:   make(chan struct{}, 1),
		room:    make(chan struct{}, 1),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go f.read()
	return f
}

// stopper stops a watch exactly once, by close or by the end of the
// watch's context (Run's, or a Relist), whichever comes first: the end of
// the context unblocks a loop or reader waiting in Next.
type stopper struct {
	w httpwatch.Watcher
	// unhook cancels the stop arranged on the context; false means the
	// stop has already begun. cancel releases the context.
	unhook  func() bool
	cancel  context.CancelFunc
	stopped chan struct{} // closed once the stop on the context is done
}

func newStopper(ctx context.Context, cancel context.CancelFunc, w httpwatch.Watcher) stopper {
	s := stopper{w: w, cancel: cancel, stopped: make(chan struct{})}
	s.unhook = context.AfterFunc(ctx, func() {
		w.Stop()
		close(s.stopped)
	})
	return s
}

// stop stops the watch and returns once it is stopped. Stop unblocks a
// pending Next (the Watcher contract).
func (s *stopper) stop() {
	if s.unhook() {
		s.w.Stop()
	} else {
		<-s.stopped
	}
	s.cancel()
}

// directFeed is read by the loop itself; the watcher flushes the Sink
// before it waits (NotifyRead).
type directFeed struct {
	stopper
	flush func()     // nil: the Sink holds nothing back
	first *firstRead // the first reply, read on its own goroutine; nil once handed out
}

// notify has w flush the Sink before it waits: the loop may wait only
// then. The loop alone reads w from now on.
func (f *directFeed) notify() {
	if f.flush != nil {
		f.w.NotifyRead(f.flush)
	}
}

func (f *directFeed) next(ctx context.Context, alarm <-chan time.Time) (reply, bool) {
	if f.first != nil {
		if f.flush != nil {
			f.flush() // the loop waits for another goroutine
		}
		select {
		case <-f.first.done:
		case <-alarm:
			return reply{}, false
		case <-ctx.Done():
			return reply{}, false
		}
		rep := f.first.rep
		f.first = nil
		f.notify()
		return rep, true
	}
	ev, err := f.w.Next()
	return reply{ev, err}, true
}

func (f *directFeed) close() {
	f.stop()
	if f.first != nil {
		<-f.first.done // Stop ended its Next
	}
	if f.flush != nil {
		f.flush()
	}
}

// feedAhead is how many events a readAhead reads before the loop takes
// them. Reading ahead lets the next events decode while the loop hands the
// last ones to the sink; the bound keeps a slow sink from buffering a whole
// stream.
const feedAhead = 256

// readAhead reads the watch on a goroutine of its own. The reader appends
// every reply to queue; the loop takes the whole queue at once and hands
// its replies out one per step, so events cross between the goroutines in
// batches whenever the loop is the slower side, and a quiet stream delays
// no event.
type readAhead struct {
	stopper
	first *firstRead // read before w, if not nil (see newFeed)
	flush func()     // called before the loop waits for the reader; may be nil

	mu    sync.Mutex
	queue []reply // read, not yet taken by the loop

	ready chan struct{} // replies wait in queue (buffered: 1)
	room  chan struct{} // the loop took the queue (buffered: 1)
	quit  chan struct{} // closed by close: the reader must not wait
	done  chan struct{} // closed when the reader has returned

	taken []reply // taken by the loop; only the loop touches it
	at    int     // index in taken of the next reply to hand out
}

func (f *readAhead) read() {
	defer close(f.done)
	for {
		var rep reply
		if f.first != nil {
			<-f.first.done // Stop, in close, ends its Next
			rep, f.first = f.first.rep, nil
		} else {
			ev, err := f.w.Next()
			rep = reply{ev, err}
		}
		f.mu.Lock()
		f.queue = append(f.queue, rep)
		n := len(f.queue)
		f.mu.Unlock()
		if n == 1 {
			signal(f.ready)
		}
		if rep.end() {
			return // the stream is over: nothing more to read
		}
		for n >= feedAhead {
			select {
			case <-f.room:
			case <-f.quit:
				return
			}
			f.mu.Lock()
			n = len(f.queue)
			f.mu.Unlock()
		}
	}
}

func (f *readAhead) next(ctx context.Context, alarm <-chan time.Time) (reply, bool) {
	for {
		if rep, ok := f.take(); ok {
			return rep, true
		}
		if f.flush != nil {
			f.flush()
		}
		select {
		case <-f.ready: // take may find nothing: the token can be stale
		case <-alarm:
			return reply{}, false
		case <-ctx.Done():
			return reply{}, false
		}
	}
}

// take returns the next reply the reader has, if any.
func (f *readAhead) take() (reply, bool) {
	if f.at == len(f.taken) {
		clear(f.taken) // let the objects go; the slice goes back to the reader
		f.mu.Lock()
		f.taken, f.queue = f.queue, f.taken[:0]
		f.mu.Unlock()
		f.at = 0
		if len(f.taken) == 0 {
			return reply{}, false
		}
		signal(f.room)
	}
	rep := f.taken[f.at]
	f.at++
	return rep, true
}

func (f *readAhead) close() {
	f.stop()
	close(f.quit)
	<-f.done
	if f.flush != nil {
		f.flush()
	}
}

// signal leaves a token in c unless one is there already.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
