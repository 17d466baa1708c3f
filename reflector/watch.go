package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
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

func (r *Reflector) openWatch(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.LastSyncResourceVersion()
	w, err := r.watch(ctx, opts)
	if ctx.Err() != nil {
		return state{phase: phaseWatch}, 0
	}
	if err != nil {
		r.report("watch start", err)
		if httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err) {
			return state{phase: phaseWatch}, r.backoff(err) // conformance 22
		}
		return state{phase: phaseStart}, r.backoff(err)
	}
	return r.opened(w, opts.ResourceVersion == "" || opts.ResourceVersion == "0", false), 0
}

func (r *Reflector) openWatchList(ctx context.Context) (state, time.Duration) {
	opts := r.baseOptions()
	opts.ResourceVersion = r.LastSyncResourceVersion()
	if r.listVersion() == "" {
		opts.ResourceVersion = ""
	}
	opts.ResourceVersionMatch = "NotOlderThan"
	opts.SendInitialEvents = true
	w, err := r.watch(ctx, opts)
	if ctx.Err() != nil {
		return state{phase: phaseWatchList}, 0
	}
	if err != nil {
		r.report("watch-list", err)
		switch {
		case httpwatch.IsConnectionRefused(err) || httpwatch.IsTooManyRequests(err):
			return state{phase: phaseWatchList}, r.backoff(err)
		case opts.ResourceVersion != "" && versionUnavailable(err):
			r.setVersionUnavailable()
			return state{phase: phaseWatchList}, 0
		default:
			return state{phase: phaseList}, 0 // conformance 30: fall back to a list
		}
	}
	s := r.opened(w, false, true)
	s.quiet = r.warnWhileWaiting(ctx)
	return s, 0
}

// initialWait is how long a watch-list may go without an event before the
// reflector warns that it is still waiting for the end of the initial
// events (conformance 29). There is no other limit than the watch timeout.
const initialWait = 10 * time.Second

// warnWhileWaiting logs a warning for every initialWait without an event
// until the returned function is called or ctx ends.
func (r *Reflector) warnWhileWaiting(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	r.workers.Go(func() {
		t := r.Clock.NewTimer(initialWait)
		defer t.Stop()
		seen := r.stats.events.Load()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C():
			}
			if n := r.stats.events.Load(); n == seen {
				r.Logger.Warn("watch-list: still waiting for the initial-events-end bookmark",
					"resource", r.Name, "quiet", initialWait)
			} else {
				seen = n
			}
			t.Reset(initialWait)
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

func (r *Reflector) opened(w httpwatch.Watcher, fromAny, initial bool) state {
	r.stats.watches.Add(1)
	r.mu.Lock()
	r.current = w
	r.resyncFailed = false
	r.mu.Unlock()
	s := state{phase: phaseStream, watcher: w, opened: r.Clock.Now(), fromAny: fromAny}
	if initial {
		s.initial = map[string]*httpwatch.Object{}
	}
	return s
}

// closeWatch stops the open watch, unless a failed resync already did, and
// says whether a resync failed while it was open. Whoever takes the watch
// from r.current stops it, so Stop is called exactly once.
func (r *Reflector) closeWatch(s state) (resyncFailed bool) {
	r.mu.Lock()
	mine := r.current == s.watcher
	if mine {
		r.current = nil
	}
	resyncFailed = r.resyncFailed
	r.mu.Unlock()
	if mine {
		s.watcher.Stop()
	}
	if s.quiet != nil {
		s.quiet()
	}
	return resyncFailed
}

func (r *Reflector) stream(ctx context.Context, s state) (state, time.Duration) {
	ev, err := s.watcher.Next()
	if err != nil || ev.Type == httpwatch.Error {
		resyncFailed := r.closeWatch(s)
		if ctx.Err() != nil {
			return state{}, 0 // closed: nothing left for Run to stop
		}
		if resyncFailed {
			return state{phase: phaseStart}, r.backoff(nil)
		}
		if err == nil {
			err = ev.Err
			return r.watchFailed(s, err)
		}
		return r.watchEnded(s, err)
	}
	s.events++
	r.stats.events.Add(1)
	if err := r.checkKind(ev); err != nil {
		r.report("watch", err) // conformance 18: dropped, not fatal
		return s, 0
	}
	if s.initial != nil {
		return r.collectInitial(s, ev)
	}
	var sinkErr error
	switch ev.Type {
	case httpwatch.Added:
		sinkErr = r.Sink.Add(ev.Object)
	case httpwatch.Modified:
		sinkErr = r.Sink.Update(ev.Object)
	case httpwatch.Deleted:
		sinkErr = r.Sink.Delete(ev.Object)
	case httpwatch.Bookmark:
		if b, ok := r.Sink.(BookmarkSink); ok {
			b.Bookmark(ev.Object.ResourceVersion())
		}
	}
	if sinkErr != nil {
		r.report("sink", sinkErr)
	}
	// Synthetic ADDED events of a watch from "" or "0" come in no particular
	// version order; only later events move the version (conformance 19).
	if !(s.fromAny && ev.Type == httpwatch.Added) {
		s.fromAny = false
		r.setVersion(ev.Object.ResourceVersion())
	}
	return s, 0
}

func (r *Reflector) checkKind(ev httpwatch.Event) error {
	if ev.Type == httpwatch.Bookmark {
		return nil
	}
	kind := ev.Object.Kind()
	if kind == "Table" && strings.HasPrefix(ev.Object.APIVersion(), "meta.k8s.io/") ||
		r.ExpectedKind != "" && kind != "" && kind != r.ExpectedKind {
		return fmt.Errorf("%s event for %s %s: %w (want %q)", ev.Type, kind, objectKey(ev.Object), ErrUnexpectedKind, r.ExpectedKind)
	}
	return nil
}

func (r *Reflector) setVersion(rv string) {
	if rv == "" {
		return
	}
	r.mu.Lock()
	r.lastRV = rv
	r.mu.Unlock()
}

// collectInitial gathers a watch-list's initial events and hands them to the
// sink as one Replace at the end bookmark (conformance 28).
func (r *Reflector) collectInitial(s state, ev httpwatch.Event) (state, time.Duration) {
	switch ev.Type {
	case httpwatch.Added, httpwatch.Modified:
		s.initial[objectKey(ev.Object)] = ev.Object
	case httpwatch.Deleted:
		delete(s.initial, objectKey(ev.Object))
	case httpwatch.Bookmark:
		if ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() != "true" {
			return s, 0
		}
		items := make([]*httpwatch.Object, 0, len(s.initial))
		for _, o := range s.initial {
			items = append(items, o)
		}
		rv := ev.Object.ResourceVersion()
		if err := r.Sink.Replace(items, rv); err != nil {
			r.report("sink", err)
			r.closeWatch(s)
			return state{phase: phaseList}, r.backoff(err)
		}
		r.synced(rv, len(items))
		s.initial = nil
		s.quiet()
	}
	return s, 0
}

func objectKey(o *httpwatch.Object) string {
	if o.Namespace() == "" {
		return o.Name()
	}
	return o.Namespace() + "/" + o.Name()
}

// watchEnded handles a stream that stopped without an ERROR event: cleanly,
// or cut by the network.
func (r *Reflector) watchEnded(s state, err error) (state, time.Duration) {
	cut := httpwatch.IsProbableEOF(err)
	if !cut {
		// A stream we cannot decode any further: relist to be sure nothing is
		// lost (upstream turns this into a synthetic InternalError).
		r.report("watch", err)
		return state{phase: phaseStart}, r.backoff(err)
	}
	if !errors.Is(err, io.EOF) {
		r.report("watch", err)
	}
	if s.initial != nil {
		r.report("watch-list", ErrNoInitialEventsEnd)
		return state{phase: phaseList}, 0 // conformance 30
	}
	if s.events == 0 && r.Clock.Since(s.opened) < time.Second {
		r.report("watch", ErrVeryShortWatch)
		return state{phase: phaseStart}, r.backoff(ErrVeryShortWatch) // conformance 21
	}
	return state{phase: phaseWatch}, 0 // conformance 20
}

// watchFailed handles an ERROR event.
func (r *Reflector) watchFailed(s state, err error) (state, time.Duration) {
	r.report("watch", err)
	if s.initial != nil {
		if versionUnavailable(err) && r.LastSyncResourceVersion() != "" && r.listVersion() != "" {
			r.setVersionUnavailable()
			return state{phase: phaseWatchList}, 0
		}
		return state{phase: phaseList}, 0
	}
	switch {
	case httpwatch.IsTooManyRequests(err):
		return state{phase: phaseWatch}, r.backoff(err) // conformance 23
	case httpwatch.IsInternalError(err) && r.retryInternalError():
		return state{phase: phaseWatch}, 0
	}
	// 410 and everything else: relist at the last synced version
	// (conformance 13); only that list's own 410 drops to "".
	return state{phase: phaseStart}, r.backoff(err)
}

// internalErrorQuiet is how long without an InternalError ends a run of
// them: the next one opens a fresh retry window (upstream's one minute).
const internalErrorQuiet = time.Minute

// retryInternalError records a watch ended by an InternalError and reports
// whether it falls within MaxInternalErrorRetryDuration of the first of its
// run (conformance 23). A run ends after internalErrorQuiet without one, or
// with the list-and-watch cycle.
func (r *Reflector) retryInternalError() bool {
	if r.MaxInternalErrorRetryDuration <= 0 {
		return false
	}
	now := r.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Sub(r.internalLast) >= internalErrorQuiet {
		r.internalFirst = now
	}
	r.internalLast = now
	return now.Sub(r.internalFirst) <= r.MaxInternalErrorRetryDuration
}

// backoff returns how long to wait after err: the server's Retry-After if
// it gave one, else the next step of Backoff. Retry-After leaves the steps
// alone, as upstream, where the request layer honours it before the
// reflector's backoff ever sees the error.
func (r *Reflector) backoff(err error) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var se *httpwatch.StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return min(se.RetryAfter, r.maxRetryAfter())
	}
	return r.Backoff.Next(r.Clock.Now(), r.Random())
}

// defaultMaxRetryAfter bounds a server's Retry-After when Backoff has no cap.
const defaultMaxRetryAfter = 30 * time.Second

// maxRetryAfter is the longest the reflector honours a server's
// Retry-After: like client-go, never longer than its own backoff maximum,
// so one answer cannot park the reflector for a day.
func (r *Reflector) maxRetryAfter() time.Duration {
	if r.Backoff.Cap > 0 {
		return r.Backoff.Cap
	}
	return defaultMaxRetryAfter
}

func (r *Reflector) report(op string, err error) {
	r.stats.errors.Add(1)
	e := &SyncError{Resource: r.Name, Op: op, Err: err}
	r.Logger.Debug("reflector error", "resource", r.Name, "op", op, "err", err)
	if r.OnError != nil {
		r.OnError(e)
	}
}
