package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
)

// stream takes the next thing that happens to the open watch: a deadline
// (resync, a quiet watch-list), an event, the end of the stream, or the
// end of ctx.
func (r *Reflector) stream(ctx context.Context, s *state) time.Duration {
	// A flood of events must not hold off a deadline, nor must the order
	// in which select picks ready cases.
	if d := s.deadline(); !d.IsZero() && !r.clock().Now().Before(d) {
		return r.due(s)
	}
	rep, ok := s.feed.next(ctx, s.alarm.c())
	if !ok {
		if ctx.Err() != nil {
			s.closeWatch()
			s.enter(phaseWatch) // Run returns
			return 0
		}
		s.alarm.rang()
		return r.due(s)
	}
	if rep.end() {
		s.closeWatch()
		if ctx.Err() != nil {
			s.enter(phaseWatch) // ended by the cancellation: Run returns
			return 0
		}
		if r.relistAsked() {
			s.enter(phaseStart) // ended by a Relist, or it may as well be
			return 0
		}
		if rep.err == nil {
			return r.watchFailed(s, rep.ev.Err)
		}
		return r.watchEnded(s, rep.err)
	}
	return r.event(s, rep.ev)
}

// event hands one watch event to the sink and moves the version.
func (r *Reflector) event(s *state, ev httpwatch.Event) time.Duration {
	s.events++
	r.stats.events.Add(1)
	if s.events == 1 {
		r.recovered() // the watch works
	}
	if err := r.checkKind(ev); err != nil {
		r.report(OpWatch, err) // conformance 18: dropped, not fatal
		return 0
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
		if p, ok := r.Sink.(Progresser); ok {
			p.Progress(ev.Object.ResourceVersion())
		}
	}
	if sinkErr != nil {
		r.report(OpSink, sinkErr)
	}
	// Synthetic ADDED events of a watch from "" or "0" come in no particular
	// version order; only later events move the version (conformance 19).
	if !(s.fromAny && ev.Type == httpwatch.Added) {
		s.fromAny = false
		if rv := ev.Object.ResourceVersion(); rv != "" {
			s.lastRV = rv
		}
	}
	return 0
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

// collectInitial gathers a watch-list's initial events and hands them to the
// sink as one Replace at the end bookmark (conformance 28).
func (r *Reflector) collectInitial(s *state, ev httpwatch.Event) time.Duration {
	switch ev.Type {
	case httpwatch.Added, httpwatch.Modified:
		s.initial[objectKey(ev.Object)] = ev.Object
	case httpwatch.Deleted:
		delete(s.initial, objectKey(ev.Object))
	case httpwatch.Bookmark:
		if !endsInitialEvents(ev) {
			return 0
		}
		items := make([]*raw.Object, 0, len(s.initial))
		for _, o := range s.initial {
			items = append(items, o)
		}
		rv := ev.Object.ResourceVersion()
		if err := r.replace(items, rv); err != nil {
			r.report(OpSink, err)
			s.closeWatch()
			return r.retry(s, phaseList, err)
		}
		r.synced(&s.memory, rv, len(items))
		s.initial = nil
	}
	return 0
}

// objectKey is o's store key, as the informer's cache files it.
func objectKey(o *raw.Object) string { return store.JoinKey(o.Namespace(), o.Name()) }

// watchEnded handles a stream that stopped without an ERROR event: cleanly
// (io.EOF), or cut by the network. The watch is closed.
func (r *Reflector) watchEnded(s *state, err error) time.Duration {
	clean := errors.Is(err, io.EOF)
	short := s.events == 0 && r.clock().Since(s.opened) < time.Second
	if !clean {
		// A watch cut now and then is routine; one cut at once, before
		// anything came, is the network failing: said at Warn.
		r.reportAs(OpWatch, err, routine(OpWatch, err) && !short)
		if cause.Of(err).Then == cause.Relist {
			// A stream we cannot decode any further: relist to be sure
			// nothing is lost (upstream turns this into a synthetic
			// InternalError).
			return r.retry(s, phaseStart, err)
		}
	}
	if s.initial != nil {
		r.report(OpWatchList, ErrNoInitialEventsEnd)
		s.enter(phaseList) // conformance 30
		return 0
	}
	if short {
		if clean { // the server closed it at once: conformance 21
			r.report(OpWatch, ErrVeryShortWatch)
			return r.retry(s, phaseStart, ErrVeryShortWatch)
		}
		// The network cut it at once: the version is as good as before,
		// but the path may be down. Resume after a backoff (decision 38).
		return r.retry(s, phaseWatch, err)
	}
	if clean { // the server ended it, as at its timeout
		r.stats.timeout.Add(1)
		r.stats.synced(r.clock().Now())
	}
	s.enter(phaseWatch) // conformance 20
	return 0
}

// watchFailed handles an ERROR event. The watch is closed.
func (r *Reflector) watchFailed(s *state, err error) time.Duration {
	r.report(OpWatch, err)
	if s.initial != nil {
		if versionUnavailable(err) && s.lastRV != "" && !s.rvUnavailable {
			s.rvUnavailable = true
			s.enter(phaseWatchList)
			return 0
		}
		s.enter(phaseList)
		return 0
	}
	switch {
	case httpwatch.IsTooManyRequests(err):
		return r.retry(s, phaseWatch, err) // conformance 23
	case httpwatch.IsInternalError(err) && r.retryInternalError(&s.memory):
		s.enter(phaseWatch)
		return 0
	}
	// 410 and everything else: relist at the last synced version
	// (conformance 13); only that list's own 410 drops to "".
	return r.retry(s, phaseStart, err)
}

// internalErrorQuiet is how long without an InternalError ends a run of
// them: the next one opens a fresh retry window (upstream's one minute).
const internalErrorQuiet = time.Minute

// retryInternalError records a watch ended by an InternalError and reports
// whether it falls within MaxInternalErrorRetryDuration of the first of its
// run (conformance 23). A run ends after internalErrorQuiet without one, or
// with the list-and-watch cycle.
func (r *Reflector) retryInternalError(m *memory) bool {
	if r.MaxInternalErrorRetryDuration <= 0 {
		return false
	}
	now := r.clock().Now()
	if now.Sub(m.internal.last) >= internalErrorQuiet {
		m.internal.first = now
	}
	m.internal.last = now
	return now.Sub(m.internal.first) <= r.MaxInternalErrorRetryDuration
}

// endsInitialEvents reports the bookmark that ends a watch-list's initial
// events, annotated k8s.io/initial-events-end.
func endsInitialEvents(ev httpwatch.Event) bool {
	return ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() == "true"
}
