package events

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/patch"
)

// series is what Run knows of an Event written: where it is and how often
// it occurred.
type series struct {
	name, namespace string
	first           pending
	count           int
	last            time.Time
	unwritten       bool // count grew since it was last written
}

// Run writes the events recorded until ctx is done. Writes are one at a
// time; while the server is slow or down the buffer fills and new events
// are dropped. Events still buffered when ctx ends are dropped.
func (r *Recorder) Run(ctx context.Context) {
	r.init()
	known := map[seriesKey]*series{}
	flush := r.Clock.NewTimer(r.flushEvery())
	defer flush.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-r.queue:
			r.occurred(ctx, known, p)
		case <-flush.C():
			r.flush(ctx, known)
			flush.Reset(r.flushEvery())
		}
	}
}

func (r *Recorder) flushEvery() time.Duration {
	if r.SeriesFlush <= 0 {
		return DefaultSeriesFlush
	}
	return r.SeriesFlush
}

func (r *Recorder) expiry() time.Duration {
	if r.SeriesExpiry <= 0 {
		return DefaultSeriesExpiry
	}
	return r.SeriesExpiry
}

// occurred creates the Event of a first occurrence, and writes a series at
// its second; later ones wait for the flush.
func (r *Recorder) occurred(ctx context.Context, known map[seriesKey]*series, p pending) {
	s, ok := known[p.key]
	if ok && p.at.Sub(s.last) >= r.expiry() {
		delete(known, p.key) // ended: start anew
		ok = false
	}
	if !ok {
		s = &series{first: p, count: 1, last: p.at, namespace: p.ref.namespace, name: r.eventName(p)}
		if s.namespace == "" {
			s.namespace = "default" // events about cluster-scoped objects
		}
		if r.create(ctx, s) {
			known[p.key] = s
		}
		return
	}
	s.count++
	s.last = p.at
	s.unwritten = true
	if s.count == 2 {
		r.writeSeries(ctx, known, p.key, s)
	}
}

// flush writes the series that grew, and forgets those that ended.
func (r *Recorder) flush(ctx context.Context, known map[seriesKey]*series) {
	now := r.Clock.Now()
	for k, s := range known {
		if s.unwritten {
			r.writeSeries(ctx, known, k, s)
		}
		if now.Sub(s.last) >= r.expiry() {
			delete(known, k)
		}
	}
	r.forgetFullBuckets(now)
}

func (r *Recorder) create(ctx context.Context, s *series) bool {
	body, err := r.body(s)
	if err == nil {
		_, err = r.Events.Namespace(s.namespace).Create(ctx, body)
	}
	if err != nil {
		r.failed(s.namespace, fmt.Errorf("events: create %s/%s: %w", s.namespace, s.name, err))
		return false
	}
	r.recorded()
	return true
}

// writeSeries patches the Event's series; an Event gone from the server
// (events expire) is created again, with the series.
func (r *Recorder) writeSeries(ctx context.Context, known map[seriesKey]*series, k seriesKey, s *series) {
	body, err := patch.New().Set("series.count", s.count).Set("series.lastObservedTime", microTime(s.last)).Bytes()
	if err == nil {
		_, err = r.Events.Namespace(s.namespace).Patch(ctx, s.name, httpwatch.MergePatch, body)
	}
	if httpwatch.IsNotFound(err) {
		s.name = r.eventName(pending{ref: s.first.ref, at: s.last})
		if body, err = r.body(s); err == nil {
			_, err = r.Events.Namespace(s.namespace).Create(ctx, body)
		}
	}
	if err != nil {
		r.failed(s.namespace, fmt.Errorf("events: write series of %s/%s: %w", s.namespace, s.name, err))
		delete(known, k)
		return
	}
	r.recorded()
	s.unwritten = false
}

// failed counts an event the server did not take in namespace ns and
// says why, by the failure policy (decision 20) and the event's cause: the
// first failure of a cause at Warn, or at Error with what to do when
// retrying cannot cure it (a 403 says what to grant), repeats counted.
func (r *Recorder) failed(ns string, err error) {
	r.dropped.Add(1)
	if r.OnError != nil {
		r.OnError(err)
	}
	c := cause.Of(err)
	if c.Class == cause.Routine {
		r.Logger.Debug("events: event not recorded", "err", err)
		return
	}
	f := faillog.Failure{
		Key:   c.LogKey(),
		Level: slog.LevelWarn,
		Msg:   "events: event not recorded; events are dropped while this lasts",
		Again: "events: event not recorded",
		Attrs: []any{"namespace", ns, "err", err},
		Err:   err,
	}
	if c.Class == cause.Permanent {
		f.Level = slog.LevelError
	}
	if hint := c.HintFor(cause.Request{Verb: "create and patch", Resource: "events.events.k8s.io", Namespace: ns}); hint != "" {
		f.Attrs = append(f.Attrs, "hint", hint)
	}
	r.failures.Failed(f)
}

// recorded notes a write the server took: after failures, it says once
// that events are recorded again.
func (r *Recorder) recorded() { r.failures.Recovered("events: events recorded again") }
