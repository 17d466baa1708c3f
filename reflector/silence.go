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
// It looks every eighth of the limit rather than timing each event, so a
// silence is found between one and one and an eighth limits after it
// began. The reader marks only its waits, which the watcher announces
// (httpwatch.Watcher.NotifyRead): a read costs two atomic stores, an event
// a test of a plain flag. It marks them before the watchdog is armed too,
// so a wait that began before it still counts. Its goroutine and timer
// start only when it is armed: until then nothing is due, and a reflector
// that waits on nothing holds no timer.
type silence struct {
	limit time.Duration
	clock clock.Clock
	w     httpwatch.Watcher

	armed sync.Once // starts the watchdog; in stop, forbids it
	// mark is the reader's waits ended so far, doubled, plus one while it
	// waits: a look that finds the same odd mark as the last one finds a
	// reader that has waited all the while.
	mark atomic.Uint64
	// waits and waiting are the reader's own: waits it ended, and whether
	// the Next under way waits (its watcher said so).
	waits   uint64
	waiting bool
	fired   atomic.Bool
	running bool // the watchdog started; read once it has returned

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

// wait marks that the reader waits for the server: the watcher calls it
// (through NotifyRead) on the reader's goroutine, in Next, before it
// blocks.
func (s *silence) wait() {
	s.waiting = true
	s.mark.Store(s.waits<<1 | 1)
}

// waited notes a Next that waited, or failed with err: the wait is over,
// and an end the watchdog caused is ErrWatchIdle.
func (s *silence) waited(err error) error {
	if s.waiting {
		s.waiting = false
		s.waits++
		s.mark.Store(s.waits << 1)
	}
	if err != nil && s.fired.Load() {
		err = fmt.Errorf("%w: nothing from the server for %v", httpwatch.ErrWatchIdle, s.limit)
	}
	return err
}

func (s *silence) watch() {
	defer close(s.done)
	every := max(s.limit/8, time.Millisecond)
	t := s.clock.NewTimer(every)
	defer t.Stop()
	var quiet time.Duration
	last := s.mark.Load()
	for {
		select {
		case <-t.C():
		case <-s.quit:
			return
		}
		t.Reset(every)
		seen := s.mark.Load()
		if seen != last || seen&1 == 0 { // news, or the reader is not waiting
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
