package reflector

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
)

// silence watches over one watch for WatchIdleTimeout (decision 36): once
// armed — the server has shown that it sends bookmarks to quiet watches —
// a watch whose reader has waited in Next that long with nothing coming
// is stopped, and its Next reports ErrWatchIdle. Only time spent waiting
// in Next counts, so a slow sink, which holds the reader back, is never
// taken for a silent server.
//
// It looks every eighth of the limit rather than timing each event, so
// an event costs two atomic stores and an add, and a silence is found
// between one and one and an eighth limits after it began. Its goroutine
// and timer start only when it is armed: until then nothing is due, and
// a reflector that waits on nothing holds no timer.
type silence struct {
	limit time.Duration
	clock clock.Clock
	w     httpwatch.Watcher

	armed    sync.Once     // starts the watchdog; in stop, forbids it
	waiting  atomic.Bool   // the reader is in Next
	progress atomic.Uint64 // Nexts returned
	fired    atomic.Bool
	running  bool // the watchdog started; read once it has returned

	quit chan struct{} // closed by stop
	done chan struct{} // closed when the watchdog has returned
}

// watchSilence starts the watchdog of w, nil when WatchIdleTimeout sets
// none.
func (r *Reflector) watchSilence(w httpwatch.Watcher, armed bool) *silence {
	if r.WatchIdleTimeout <= 0 {
		return nil
	}
	s := &silence{limit: r.WatchIdleTimeout, clock: r.clock(), w: w, quit: make(chan struct{}), done: make(chan struct{})}
	if armed {
		s.arm()
	}
	return s
}

// arm starts watching over the watch: the server has shown that it sends
// bookmarks to quiet watches.
func (s *silence) arm() {
	s.armed.Do(func() {
		s.running = true
		go s.watch()
	})
}

// next is w.Next, watched over.
func (s *silence) next() (httpwatch.Event, error) {
	s.waiting.Store(true)
	ev, err := s.w.Next()
	s.waiting.Store(false)
	s.progress.Add(1)
	if err != nil && s.fired.Load() {
		err = fmt.Errorf("%w: nothing from the server for %v", httpwatch.ErrWatchIdle, s.limit)
	}
	return ev, err
}

func (s *silence) watch() {
	defer close(s.done)
	every := max(s.limit/8, time.Millisecond)
	t := s.clock.NewTimer(every)
	defer t.Stop()
	var quiet time.Duration
	last := s.progress.Load()
	for {
		select {
		case <-t.C():
		case <-s.quit:
			return
		}
		t.Reset(every)
		seen := s.progress.Load()
		if seen != last || !s.waiting.Load() {
			last, quiet = seen, 0
			continue
		}
		if quiet += every; quiet >= s.limit {
			s.fired.Store(true)
			s.w.Stop() // unblocks Next
			return
		}
	}
}

// stop ends the watchdog, if it started, and waits for it.
func (s *silence) stop() {
	s.armed.Do(func() { close(s.done) })
	close(s.quit)
	<-s.done
}
