package reflector

import (
	"cmp"
	"context"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/raw"
)

func (r *Reflector) watchTimeout() int64 {
	lo := r.MinWatchTimeout
	if lo < 5*time.Minute {
		lo = 5 * time.Minute // conformance 10: shorter minimums are ignored
	}
	return int64((lo + time.Duration(r.random()*float64(lo))) / time.Second)
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
	if !s.unconfirmed && !r.awaitRestore(ctx, s) {
		return 0
	}
	opts := r.baseOptions()
	opts.ResourceVersion = s.lastRV
	fromAny := opts.ResourceVersion == "" || opts.ResourceVersion == "0"
	return r.open(ctx, s, opts, fromAny, false, func(err error) time.Duration {
		r.report(OpWatchStart, err)
		if cause.Of(err).Then == cause.Resume {
			return r.retry(s, phaseWatch, err) // conformance 22, decision 38: the network or a 429
		}
		return r.retry(s, phaseStart, err)
	})
}

func (r *Reflector) openWatchList(ctx context.Context, s *state) time.Duration {
	if !r.awaitRestore(ctx, s) {
		return 0
	}
	opts := r.baseOptions()
	opts.ResourceVersion = s.lastRV
	if s.rvUnavailable {
		opts.ResourceVersion = ""
	}
	opts.ResourceVersionMatch = "NotOlderThan"
	opts.SendInitialEvents = true
	return r.open(ctx, s, opts, false, true, func(err error) time.Duration {
		switch {
		case cause.Of(err).Then == cause.Resume: // conformance 30, decision 38
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
	})
}

// open opens a watch with opts and moves s to phaseStream on it. A watch
// that a Relist ended before it opened begins a new cycle; any other
// failure is failed's to handle, and failed's wait is returned. When ctx
// ends first, s is left as it is: Run returns.
func (r *Reflector) open(ctx context.Context, s *state, opts httpwatch.ListOptions, fromAny, initial bool, failed func(error) time.Duration) time.Duration {
	opts.IdleTimeout = r.idleTimeout()
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
		return failed(err)
	}
	r.opened(wctx, cancel, s, w, fromAny, initial)
	return 0
}

// initialWait is how long a watch-list may go without an event before the
// reflector warns that it is still waiting for the end of the initial
// events (conformance 29). There is no other limit than the watch timeout.
const initialWait = 10 * time.Second

// opened moves s to phaseStream on w, opened with ctx, which cancel ends,
// or to phaseConfirm if w resumes from an unconfirmed restored state.
func (r *Reflector) opened(ctx context.Context, cancel context.CancelFunc, s *state, w httpwatch.Watcher, fromAny, initial bool) {
	r.stats.watches.Add(1)
	s.enter(phaseStream)
	s.opened = r.clock().Now()
	if s.unconfirmed && !initial {
		s.phase = phaseConfirm
		s.first = readFirst(w)
		s.confirmAt = s.opened.Add(r.Restore.ConfirmAfter)
	}
	// Without a resync period nor a watch-list to watch over, nothing can
	// fall due while this watch is open: the loop may block in Next itself.
	s.feed = newFeed(ctx, cancel, w, s.resyncAt.IsZero() && !initial, r.flusher(), s.first)
	s.fromAny = fromAny
	if initial {
		s.initial = map[string]*raw.Object{}
		s.warnAt = s.opened.Add(initialWait)
	}
}

// idleTimeout is the bound of a watch's silence the reflector asks its
// source for (decision 36).
func (r *Reflector) idleTimeout() time.Duration {
	return cmp.Or(r.WatchIdleTimeout, DefaultWatchIdleTimeout)
}
