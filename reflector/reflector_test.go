package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptSource is a ListerWatcher that answers from scripts and records what
// it was asked.
type scriptSource struct {
	mu        sync.Mutex
	pages     []func(httpwatch.ListOptions) (*httpwatch.Page, error)
	watches   []func(httpwatch.ListOptions) (httpwatch.Watcher, error)
	listOpts  []httpwatch.ListOptions
	watchOpts []httpwatch.ListOptions
	noWL      bool
}

func (s *scriptSource) ListPage(_ context.Context, o httpwatch.ListOptions) (*httpwatch.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.listOpts = append(s.listOpts, o)
	if len(s.pages) == 0 {
		return nil, errors.New("script: no list answer left")
	}
	f := s.pages[0]
	s.pages = s.pages[1:]
	return f(o)
}

func (s *scriptSource) Watch(ctx context.Context, o httpwatch.ListOptions) (httpwatch.Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watchOpts = append(s.watchOpts, o)
	if len(s.watches) == 0 {
		return nil, errors.New("script: no watch answer left")
	}
	f := s.watches[0]
	s.watches = s.watches[1:]
	w, err := f(o)
	if sw, ok := w.(*scriptWatcher); ok {
		sw.ctx = ctx // like a real watch, the stream ends with its request's context
	}
	return w, err
}

func (s *scriptSource) SupportsWatchList() bool { return !s.noWL }

func page(rv, cont string, objs ...*httpwatch.Object) func(httpwatch.ListOptions) (*httpwatch.Page, error) {
	return func(httpwatch.ListOptions) (*httpwatch.Page, error) {
		return &httpwatch.Page{Items: objs, ResourceVersion: rv, Continue: cont}, nil
	}
}

func fail(err error) func(httpwatch.ListOptions) (*httpwatch.Page, error) {
	return func(httpwatch.ListOptions) (*httpwatch.Page, error) { return nil, err }
}

func watchOf(w *scriptWatcher) func(httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil }
}

func watchFail(err error) func(httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return nil, err }
}

// scriptWatcher yields its steps, then blocks until stopped (then io.EOF).
type scriptWatcher struct {
	ctx     context.Context
	total   int // steps scripted
	steps   []watchStep
	stopped chan struct{}
	once    sync.Once
}

type watchStep struct {
	ev  httpwatch.Event
	err error
}

func newWatcher(steps ...watchStep) *scriptWatcher {
	return &scriptWatcher{total: len(steps), steps: steps, stopped: make(chan struct{})}
}

// scripted is how many steps w was given: what a reader may take from it
// before Next blocks.
func (w *scriptWatcher) scripted() int { return w.total }

func (w *scriptWatcher) Next() (httpwatch.Event, error) {
	if len(w.steps) > 0 {
		s := w.steps[0]
		w.steps = w.steps[1:]
		return s.ev, s.err
	}
	done := context.Background().Done()
	if w.ctx != nil {
		done = w.ctx.Done()
	}
	select {
	case <-w.stopped:
	case <-done:
	}
	return httpwatch.Event{}, io.EOF
}

func (w *scriptWatcher) Stop() { w.once.Do(func() { close(w.stopped) }) }

func ev(t httpwatch.EventType, o *httpwatch.Object) watchStep {
	return watchStep{ev: httpwatch.Event{Type: t, Object: o}}
}
func errEv(err error) watchStep {
	return watchStep{ev: httpwatch.Event{Type: httpwatch.Error, Err: err}}
}
func end(err error) watchStep { return watchStep{err: err} }

func obj(name, rv string) *httpwatch.Object {
	o, err := httpwatch.NewObject(fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q}}`, name, rv))
	if err != nil {
		panic(err)
	}
	return o
}

func endBookmark(rv string) *httpwatch.Object {
	o, err := httpwatch.NewObject(fmt.Appendf(nil, `{"kind":"Pod","metadata":{"resourceVersion":%q,"annotations":{"k8s.io/initial-events-end":"true"}}}`, rv))
	if err != nil {
		panic(err)
	}
	return o
}

// recordSink records every call as a line.
type recordSink struct {
	mu        sync.Mutex
	calls     []string
	resyncErr error
	resyncs   int
}

func (s *recordSink) add(format string, a ...any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, fmt.Sprintf(format, a...))
	return nil
}

func (s *recordSink) Add(o *httpwatch.Object) error {
	return s.add("add %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Update(o *httpwatch.Object) error {
	return s.add("update %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Delete(o *httpwatch.Object) error {
	return s.add("delete %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Bookmark(rv string) { _ = s.add("bookmark %s", rv) }
func (s *recordSink) Replace(items []*httpwatch.Object, rv string) error {
	return s.add("replace %d@%s", len(items), rv)
}
func (s *recordSink) Resync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resyncs++
	s.calls = append(s.calls, "resync")
	return s.resyncErr
}

func (s *recordSink) log() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

var (
	errExpired  = &httpwatch.StatusError{Code: 410, Reason: "Expired", Message: "too old resource version"}
	errGone     = &httpwatch.StatusError{Code: 410, Reason: "Gone"}
	errThrottle = &httpwatch.StatusError{Code: 429, Reason: "TooManyRequests", RetryAfter: 7 * time.Second}
	errInternal = &httpwatch.StatusError{Code: 500, Reason: "InternalError"}
	errBad      = &httpwatch.StatusError{Code: 400, Reason: "BadRequest", Message: "sendInitialEvents is forbidden"}
)

func newTestReflector(src *scriptSource) (*Reflector, *recordSink, *clock.Fake) {
	sink := &recordSink{}
	r := New(src, sink)
	r.Name = "pods"
	r.WatchList = false
	c := clock.NewFake(time.Unix(1000, 0))
	r.Clock = c
	r.Random = func() float64 { return 0 }
	return r, sink, c
}

// t0 is the fake time of newTestReflector's clock.
var t0 = time.Unix(1000, 0)

// synced is the memory of a reflector synced to rv.
func synced(rv string) memory { return memory{lastRV: rv} }

// backedOff is m after one step of the default backoff at t0.
func backedOff(m memory) memory {
	m.backoff = progress{next: 1600 * time.Millisecond, resetAt: t0}
	return m
}

// at is a state in phase p remembering m.
func at(p phase, m memory) state { return state{phase: p, memory: m} }

// Each case is one transition of the state machine: a state, what the source
// answers, and the state (phase and everything it remembers), wait and sink
// calls that must follow. The relist policy is client-go's (decision 1), and
// a reflector can start from a saved resourceVersion (decision 10).
func TestReflectorTransitions(t *testing.T) {
	a1, b2 := obj("a", "1"), obj("b", "2")
	resyncEvery := func(r *Reflector, _ *scriptSource) { r.ResyncPeriod = time.Minute }
	cases := []struct {
		name     string
		prep     func(r *Reflector, src *scriptSource) // configuration and answers, never state
		from     state
		want     phase
		mem      memory // what the next state remembers
		wait     time.Duration
		calls    []string
		checkOpt func(t *testing.T, src *scriptSource)
		check    func(t *testing.T, next state)
	}{
		{
			name: "start lists when watch-list is off",
			from: at(phaseStart, memory{}), want: phaseList, mem: memory{cycled: true},
		},
		{
			name: "conformance 27: start uses watch-list when on",
			prep: func(r *Reflector, _ *scriptSource) { r.WatchList = true },
			from: at(phaseStart, memory{}), want: phaseWatchList, mem: memory{cycled: true},
		},
		{
			name: "conformance 31: a source without watch-list support is listed",
			prep: func(r *Reflector, src *scriptSource) { r.WatchList = true; src.noWL = true },
			from: at(phaseStart, memory{}), want: phaseList, mem: memory{cycled: true},
		},
		{
			name: "decision 10: resume from a saved resourceVersion watches without listing",
			from: at(phaseStart, synced("77")), want: phaseWatch, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "decision 10: later cycles list, whatever the last RV",
			from: at(phaseStart, memory{lastRV: "77", cycled: true}), want: phaseList, mem: memory{lastRV: "77", cycled: true},
		},
		{
			name: "conformance 23: a new cycle opens a fresh InternalError window",
			from: at(phaseStart, memory{lastRV: "5", cycled: true, internal: window{first: t0, last: t0}}),
			want: phaseList, mem: memory{lastRV: "5", cycled: true},
		},
		{
			name: "conformance 12, conformance 16: first list reads RV 0 in pages of 500, then Replace",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("10", "", a1, b2)) },
			from: at(phaseList, memory{}), want: phaseWatch, calls: []string{"replace 2@10"}, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "0", src.listOpts[0].ResourceVersion)
				assert.EqualValues(t, 500, src.listOpts[0].Limit)
			},
		},
		{
			name: "conformance 14 15: list follows continue tokens to the end; an RV 0 list in pages is remembered",
			prep: func(_ *Reflector, src *scriptSource) {
				src.pages = append(src.pages, page("10", "tok", a1), page("10", "", b2))
			},
			from: at(phaseList, memory{}), want: phaseWatch, calls: []string{"replace 2@10"},
			mem: memory{lastRV: "10", paginated: true},
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "tok", src.listOpts[1].Continue)
				assert.Empty(t, src.listOpts[1].ResourceVersion)
			},
		},
		{
			name: "conformance 13 15: a relist reads the last synced RV, unpaginated",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("45", "", a1)) },
			from: at(phaseList, synced("40")), want: phaseWatch, calls: []string{"replace 1@45"}, mem: synced("45"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				assert.Equal(t, "40", src.listOpts[0].ResourceVersion)
				assert.EqualValues(t, 0, src.listOpts[0].Limit)
			},
		},
		{
			name: "conformance 15: once the RV 0 list came paginated, relists keep pages",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("45", "", a1)) },
			from: at(phaseList, memory{lastRV: "40", paginated: true}), want: phaseWatch, calls: []string{"replace 1@45"},
			mem:      memory{lastRV: "45", paginated: true},
			checkOpt: func(t *testing.T, src *scriptSource) { assert.EqualValues(t, 500, src.listOpts[0].Limit) },
		},
		{
			name: "conformance 15: an explicit page size wins",
			prep: func(r *Reflector, src *scriptSource) {
				r.PageSize = 7
				src.pages = append(src.pages, page("45", "", a1))
			},
			from: at(phaseList, synced("40")), want: phaseWatch, calls: []string{"replace 1@45"}, mem: synced("45"),
			checkOpt: func(t *testing.T, src *scriptSource) { assert.EqualValues(t, 7, src.listOpts[0].Limit) },
		},
		{
			name: "conformance 12: a list refused with Expired is retried at once at RV \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, fail(errExpired)) },
			from: at(phaseList, synced("40")), want: phaseList, mem: memory{lastRV: "40", rvUnavailable: true},
		},
		{
			name: "conformance 12: a list at RV \"\" that succeeds makes the version available again",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, page("60", "", a1)) },
			from: at(phaseList, memory{lastRV: "40", rvUnavailable: true}), want: phaseWatch,
			calls: []string{"replace 1@60"}, mem: synced("60"),
			checkOpt: func(t *testing.T, src *scriptSource) { assert.Empty(t, src.listOpts[0].ResourceVersion) },
		},
		{
			name: "conformance 9: any other list error backs off and begins a new cycle",
			prep: func(_ *Reflector, src *scriptSource) { src.pages = append(src.pages, fail(errInternal)) },
			from: at(phaseList, memory{}), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(memory{}),
		},
		{
			name: "conformance 10 11: a watch asks for bookmarks at the last RV with a 5-10 min timeout",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatch, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				o := src.watchOpts[0]
				assert.True(t, o.AllowWatchBookmarks)
				assert.Equal(t, "10", o.ResourceVersion)
				assert.EqualValues(t, 300, o.TimeoutSeconds)
				assert.False(t, o.SendInitialEvents)
			},
		},
		{
			name: "conformance 22: a refused watch start backs off and watches again",
			prep: func(_ *Reflector, src *scriptSource) {
				src.watches = append(src.watches, watchFail(fmt.Errorf("dial: %w", errConnRefused)))
			},
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 800 * time.Millisecond, mem: backedOff(synced("10")),
		},
		{
			name: "conformance 22: a 429 watch start waits Retry-After, takes no backoff step and watches again",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errThrottle)) },
			from: at(phaseWatch, synced("10")), want: phaseWatch, wait: 7 * time.Second, mem: synced("10"),
		},
		{
			name: "conformance 22: other watch start errors relist after a backoff",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errGone)) },
			from: at(phaseWatch, synced("10")), want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("10")),
		},
		{
			name: "conformance 17: events reach the sink and move the RV",
			from: streamOf(newWatcher(ev(httpwatch.Added, obj("a", "2"))), synced("1")), want: phaseStream,
			calls: []string{"add a@2"}, mem: synced("2"),
		},
		{
			name: "conformance 17: modified and deleted",
			from: streamOf(newWatcher(ev(httpwatch.Deleted, obj("a", "3"))), synced("1")), want: phaseStream,
			calls: []string{"delete a@3"}, mem: synced("3"),
		},
		{
			name: "conformance 17: a bookmark moves the RV and changes no object",
			from: streamOf(newWatcher(ev(httpwatch.Bookmark, obj("", "9"))), synced("1")), want: phaseStream,
			calls: []string{"bookmark 9"}, mem: synced("9"),
		},
		{
			name: "conformance 19: synthetic ADDED of a watch from RV 0 do not move the RV",
			from: func() state {
				s := streamOf(newWatcher(ev(httpwatch.Added, obj("a", "50"))), synced("1"))
				s.fromAny = true
				return s
			}(),
			want: phaseStream, calls: []string{"add a@50"}, mem: synced("1"),
		},
		{
			name: "conformance 20: a clean end after events watches again at once",
			from: func() state { s := streamOf(newWatcher(end(io.EOF)), synced("5")); s.events = 3; return s }(),
			want: phaseWatch, mem: synced("5"),
		},
		{
			name: "a stream cut mid-frame watches again from the last RV",
			from: func() state {
				s := streamOf(newWatcher(end(fmt.Errorf("read frame: %w", io.ErrUnexpectedEOF))), synced("5"))
				s.events = 1
				return s
			}(),
			want: phaseWatch, mem: synced("5"),
		},
		{
			name: "conformance 21: a watch closed in under a second without events relists after a backoff",
			from: streamOf(newWatcher(end(io.EOF)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "an undecodable stream relists after a backoff",
			from: func() state {
				s := streamOf(newWatcher(end(errors.New("frame exceeds 64 MiB"))), synced("5"))
				s.events = 4
				return s
			}(),
			want: phaseStart, wait: 800 * time.Millisecond, mem: backedOff(synced("5")),
		},
		{
			name: "conformance 13: an ERROR 410 relists (at the last RV) after a backoff",
			from: streamOf(newWatcher(errEv(errExpired)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "conformance 23: an ERROR 429 watches again after Retry-After",
			from: streamOf(newWatcher(errEv(errThrottle)), synced("5")), want: phaseWatch, wait: 7 * time.Second, mem: synced("5"),
		},
		{
			name: "conformance 23: an ERROR InternalError relists by default",
			from: streamOf(newWatcher(errEv(errInternal)), synced("5")), want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(synced("5")),
		},
		{
			name: "conformance 23: an ERROR InternalError within the retry window watches again at once",
			prep: func(r *Reflector, _ *scriptSource) { r.MaxInternalErrorRetryDuration = time.Minute },
			from: streamOf(newWatcher(errEv(errInternal)), synced("5")), want: phaseWatch,
			mem: memory{lastRV: "5", internal: window{first: t0, last: t0}},
		},
		{
			name: "conformance 23: an ERROR InternalError past the retry window relists",
			prep: func(r *Reflector, _ *scriptSource) { r.MaxInternalErrorRetryDuration = 30 * time.Second },
			from: streamOf(newWatcher(errEv(errInternal)),
				memory{lastRV: "5", internal: window{first: t0.Add(-40 * time.Second), last: t0.Add(-20 * time.Second)}}),
			want: phaseStart, wait: 800 * time.Millisecond,
			mem: backedOff(memory{lastRV: "5", internal: window{first: t0.Add(-40 * time.Second), last: t0}}),
		},
		{
			name: "conformance 27: a watch-list asks for initial events not older than the last RV",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatchList, synced("10")), want: phaseStream, mem: synced("10"),
			checkOpt: func(t *testing.T, src *scriptSource) {
				o := src.watchOpts[0]
				assert.True(t, o.SendInitialEvents)
				assert.True(t, o.AllowWatchBookmarks)
				assert.Equal(t, "NotOlderThan", o.ResourceVersionMatch)
				assert.Equal(t, "10", o.ResourceVersion)
			},
			check: func(t *testing.T, next state) {
				assert.NotNil(t, next.initial, "the initial events are collected")
				assert.Equal(t, t0.Add(initialWait), next.warnAt, "a first look after 10 quiet seconds")
			},
		},
		{
			name: "conformance 30: a watch-list with the version unavailable reads \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchOf(newWatcher())) },
			from: at(phaseWatchList, memory{lastRV: "10", rvUnavailable: true}), want: phaseStream,
			mem:      memory{lastRV: "10", rvUnavailable: true},
			checkOpt: func(t *testing.T, src *scriptSource) { assert.Empty(t, src.watchOpts[0].ResourceVersion) },
		},
		{
			name: "conformance 30: a refused watch-list falls back to a list at once",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errBad)) },
			from: at(phaseWatchList, memory{}), want: phaseList,
		},
		{
			name: "conformance 30: a 429 watch-list backs off and tries again",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errThrottle)) },
			from: at(phaseWatchList, memory{}), want: phaseWatchList, wait: 7 * time.Second,
		},
		{
			name: "conformance 30: an Expired watch-list retries at once at RV \"\"",
			prep: func(_ *Reflector, src *scriptSource) { src.watches = append(src.watches, watchFail(errExpired)) },
			from: at(phaseWatchList, synced("10")), want: phaseWatchList, mem: memory{lastRV: "10", rvUnavailable: true},
		},
		{
			name: "conformance 28: initial events are held back until the end bookmark",
			from: initialOf(newWatcher(ev(httpwatch.Added, a1)), memory{}), want: phaseStream,
		},
		{
			name: "conformance 28: the end bookmark replaces the sink with the initial events and syncs its RV",
			from: initialOf(newWatcher(ev(httpwatch.Bookmark, endBookmark("9"))), memory{lastRV: "4", rvUnavailable: true}),
			want: phaseStream, calls: []string{"replace 0@9"}, mem: synced("9"),
			check: func(t *testing.T, next state) { assert.Nil(t, next.initial, "the same watch goes on with events") },
		},
		{
			name: "conformance 30: a watch-list stream ending before its bookmark falls back to a list",
			from: initialOf(newWatcher(end(io.EOF)), memory{}), want: phaseList,
		},
		{
			name: "conformance 30: a 410 before the bookmark opens the watch-list again at RV \"\"",
			from: initialOf(newWatcher(errEv(errExpired)), synced("10")), want: phaseWatchList,
			mem: memory{lastRV: "10", rvUnavailable: true},
		},
		{
			name: "conformance 29: a watch-list quiet since the last look warns and looks again later",
			from: func() state {
				s := initialOf(newWatcher(), memory{})
				s.warnAt, s.warnSeen, s.events = t0, 2, 2
				return s
			}(),
			want: phaseStream,
			check: func(t *testing.T, next state) {
				assert.Equal(t, t0.Add(initialWait), next.warnAt)
				assert.Equal(t, 2, next.warnSeen)
			},
		},
		{
			name: "conformance 25: a due resync reaches the sink and the next one is scheduled",
			prep: resyncEvery,
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStream,
			calls: []string{"resync"}, mem: memory{lastRV: "5", resyncAt: t0.Add(time.Minute)},
		},
		{
			name: "conformance 25: a resync ShouldResync declines is skipped, the next one scheduled",
			prep: func(r *Reflector, src *scriptSource) {
				resyncEvery(r, src)
				r.ShouldResync = func() bool { return false }
			},
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStream,
			mem: memory{lastRV: "5", resyncAt: t0.Add(time.Minute)},
		},
		{
			name: "conformance 25: a resync not yet due lets the event through",
			prep: resyncEvery,
			from: streamOf(newWatcher(ev(httpwatch.Modified, obj("a", "6"))), memory{lastRV: "5", resyncAt: t0.Add(time.Second)}),
			want: phaseStream, calls: []string{"update a@6"}, mem: memory{lastRV: "6", resyncAt: t0.Add(time.Second)},
		},
		{
			name: "conformance 25: a failed resync ends the watch and relists after a backoff",
			prep: func(r *Reflector, src *scriptSource) {
				resyncEvery(r, src)
				r.Sink.(*recordSink).resyncErr = errors.New("disk full")
			},
			from: streamOf(newWatcher(), memory{lastRV: "5", resyncAt: t0}), want: phaseStart, wait: 800 * time.Millisecond,
			calls: []string{"resync"}, mem: backedOff(memory{lastRV: "5", resyncAt: t0.Add(time.Minute)}),
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := &scriptSource{}
			r, sink, _ := newTestReflector(src)
			if tc.prep != nil {
				tc.prep(r, src)
			}
			from := started(tc.from)
			next, wait := r.step(context.Background(), from)
			if from.feed != nil && next.feed != from.feed {
				assert.True(t, stopped(from.feed.w), "a watch left behind is stopped")
			}
			next.closeWatch()
			assert.Equal(t, tc.want, next.phase, "next phase")
			assert.Equal(t, tc.mem, next.memory, "what the next state remembers")
			assert.Equal(t, tc.wait, wait, "wait")
			assert.Equal(t, tc.calls, sink.log(), "sink calls")
			if tc.checkOpt != nil {
				tc.checkOpt(t, src)
			}
			if tc.check != nil {
				tc.check(t, next)
			}
		})
	}
}

var errConnRefused = &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// streamOf is a state reading w, opened at t0, remembering m. Its reader
// starts with started, so that a table of cases starts no goroutines.
func streamOf(w *scriptWatcher, m memory) state {
	return state{phase: phaseStream, memory: m, watching: watching{feed: &feed{w: w}, opened: t0}}
}

// initialOf is streamOf for a watch-list before its end bookmark.
func initialOf(w *scriptWatcher, m memory) state {
	s := streamOf(w, m)
	s.initial = map[string]*httpwatch.Object{}
	s.warnAt = t0.Add(initialWait)
	return s
}

// started starts the reader of a state made by streamOf.
func started(s state) state {
	if s.feed != nil && s.feed.done == nil {
		s.feed = startFeed(s.feed.w)
	}
	return s
}

// stopped reports whether w was stopped.
func stopped(w httpwatch.Watcher) bool {
	sw, ok := w.(*scriptWatcher)
	if !ok {
		return true
	}
	select {
	case <-sw.stopped:
		return true
	default:
		return false
	}
}

// conformance 12: after a list at RV "" succeeds, the RV-unavailable flag
// clears and relists read the last synced RV again.
func TestReflectorRelistAfterExpiredListUsesQuorumReadOnce(t *testing.T) {
	src := &scriptSource{pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){
		fail(errExpired), page("60", "", obj("a", "60")), page("70", ""),
	}}
	r, sink, _ := newTestReflector(src)
	s, _ := r.step(context.Background(), at(phaseList, synced("40")))
	s, _ = r.step(context.Background(), s)
	require.Equal(t, phaseWatch, s.phase)
	_, _ = r.step(context.Background(), s.to(phaseList))
	assert.Equal(t, []string{"40", "", "60"}, []string{src.listOpts[0].ResourceVersion, src.listOpts[1].ResourceVersion, src.listOpts[2].ResourceVersion})
	assert.Equal(t, []string{"replace 1@60", "replace 0@70"}, sink.log())
}

// conformance 28: at the end bookmark the collected objects are replaced in
// once, at the bookmark's RV, and the same watch goes on delivering events.
func TestReflectorWatchListReplacesOnceAndKeepsWatching(t *testing.T) {
	w := newWatcher(
		ev(httpwatch.Added, obj("a", "3")), ev(httpwatch.Added, obj("b", "4")), ev(httpwatch.Bookmark, obj("", "4")),
		ev(httpwatch.Bookmark, endBookmark("9")), ev(httpwatch.Modified, obj("a", "10")),
	)
	src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)}}
	r, sink, _ := newTestReflector(src)
	s, _ := r.step(context.Background(), at(phaseWatchList, memory{}))
	for range 5 {
		s, _ = r.step(context.Background(), s)
		require.Equal(t, phaseStream, s.phase)
	}
	s.closeWatch()
	assert.Equal(t, []string{"replace 2@9", "update a@10"}, sink.log())
	assert.Equal(t, "10", s.lastRV)
	assert.Len(t, src.watchOpts, 1, "the watch-list stream is kept after the initial events")
	assert.EqualValues(t, 1, r.Stats().Lists)
}

// conformance 8: 800 ms doubling to a 30 s cap, each delay in [d, 2d), and
// a fresh start once two minutes passed since the last one.
func TestBackoffSequence(t *testing.T) {
	b := DefaultBackoff()
	now := time.Unix(0, 0)
	var got []time.Duration
	for range 8 {
		got = append(got, b.Next(now, 0))
	}
	ms := time.Millisecond
	assert.Equal(t, []time.Duration{800 * ms, 1600 * ms, 3200 * ms, 6400 * ms, 12800 * ms, 25600 * ms, 30 * time.Second, 30 * time.Second}, got)
	assert.Equal(t, 30*time.Second+time.Duration(0.5*float64(30*time.Second)), b.Next(now, 0.5), "jitter stretches up to 2d")
	assert.Equal(t, 800*ms, b.Next(now.Add(2*time.Minute+time.Second), 0), "reset after 2 minutes")
}

// conformance 9, conformance 26: Run lists, watches, backs off between failures on its
// clock and returns promptly when cancelled, leaving no goroutine.
func TestReflectorRunRecoversAndStops(t *testing.T) {
	w := newWatcher(ev(httpwatch.Added, obj("c", "12")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){fail(errInternal), page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	r, sink, c := newTestReflector(src)
	var errs []error
	var mu sync.Mutex
	r.OnError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1), "the failed list must wait a backoff step")
	c.Step(800 * time.Millisecond)
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, []string{"replace 1@10", "add c@12"}, sink.log())
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, errs, 1)
	var se *SyncError
	require.ErrorAs(t, errs[0], &se)
	assert.Equal(t, OpList, se.Op)
	assert.True(t, httpwatch.IsInternalError(errs[0]), "the status error stays reachable through the SyncError")
}

// conformance 25: the resync timer calls Sink.Resync when ShouldResync
// agrees; a failed resync ends the watch and relists.
func TestReflectorResync(t *testing.T) {
	w := newWatcher()
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("11", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w), watchOf(newWatcher())},
	}
	r, sink, c := newTestReflector(src)
	r.ResyncPeriod = time.Minute
	allow := make(chan bool, 4)
	r.ShouldResync = func() bool { return <-allow }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1))
	require.Eventually(t, func() bool { return r.Stats().Watches == 1 }, 10*time.Second, time.Millisecond)

	allow <- false
	c.Step(time.Minute)
	require.NoError(t, c.WaitForWaiters(wctx, 1))
	require.Eventually(t, func() bool { return len(allow) == 0 }, 10*time.Second, time.Millisecond)

	sink.mu.Lock()
	sink.resyncErr = errors.New("disk full")
	sink.mu.Unlock()
	allow <- true
	c.Step(time.Minute)
	// The failed resync stops the watch; the reflector backs off, then relists.
	require.NoError(t, c.WaitForWaiters(wctx, 2))
	c.Step(time.Second)
	require.Eventually(t, func() bool { return r.Stats().Lists == 2 }, 10*time.Second, time.Millisecond)
	sink.mu.Lock()
	assert.Equal(t, 1, sink.resyncs)
	sink.mu.Unlock()
	assert.Equal(t, "11", r.LastSyncResourceVersion())
}

// conformance 18: an event carrying another kind of object (or a Table) is
// dropped and reported; the watch goes on.
func TestReflectorDropsUnexpectedKinds(t *testing.T) {
	pod := func(kind, apiVersion, name string) *httpwatch.Object {
		o, err := httpwatch.NewObject(fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":{"name":%q,"namespace":"ns","resourceVersion":"7"}}`, kind, apiVersion, name))
		require.NoError(t, err)
		return o
	}
	w := newWatcher(
		ev(httpwatch.Added, pod("ConfigMap", "v1", "wrong")),
		ev(httpwatch.Added, pod("Table", "meta.k8s.io/v1", "table")),
		ev(httpwatch.Added, pod("Pod", "v1", "right")),
	)
	r, sink, _ := newTestReflector(&scriptSource{})
	r.ExpectedKind = "Pod"
	var errs []error
	r.OnError = func(err error) { errs = append(errs, err) }
	s := started(streamOf(w, memory{}))
	for range 3 {
		s, _ = r.step(context.Background(), s)
		require.Equal(t, phaseStream, s.phase, "the watch goes on")
	}
	s.closeWatch()
	assert.Equal(t, []string{"add right@7"}, sink.log())
	require.Len(t, errs, 2)
	for _, err := range errs {
		assert.ErrorIs(t, err, ErrUnexpectedKind)
	}
}

// conformance 24, decision 6: errors upstream only logs while streaming
// (an ERROR event, a cut stream, a sink failure) reach OnError too, each a
// *SyncError saying what the reflector was doing.
func TestReflectorReportsStreamingErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		step watchStep
		op   Op
		is   func(error) bool
	}{
		{"ERROR event", errEv(errExpired), OpWatch, httpwatch.IsGone},
		{"cut stream", end(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)), OpWatch, httpwatch.IsProbableEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, _ := newTestReflector(&scriptSource{})
			var got []error
			r.OnError = func(err error) { got = append(got, err) }
			s := started(streamOf(newWatcher(tc.step), synced("5")))
			s.events = 1
			next, _ := r.step(context.Background(), s)
			next.closeWatch()
			require.Len(t, got, 1)
			var se *SyncError
			require.ErrorAs(t, got[0], &se)
			assert.Equal(t, tc.op, se.Op)
			assert.True(t, tc.is(got[0]), "%v", got[0])
			assert.Contains(t, got[0].Error(), "reflector pods: "+tc.op.String())
		})
	}
}

// syncBuffer is an io.Writer safe for a logger and a test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}

// conformance 29: while a watch-list waits for its end bookmark, a warning
// is logged for every 10 s without an event; there is no other deadline.
func TestReflectorWarnsWhileWaitingForInitialEvents(t *testing.T) {
	w := newWatcher()
	src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)}}
	r, sink, c := newTestReflector(src)
	r.WatchList = true
	var logs syncBuffer
	r.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1), "the watchdog waits")
	c.Step(9 * time.Second)
	assert.NotContains(t, logs.String(), "initial-events-end")
	c.Step(time.Second)
	require.Eventually(t, func() bool {
		return strings.Contains(logs.String(), "still waiting for the initial-events-end bookmark")
	},
		10*time.Second, time.Millisecond)
	assert.Empty(t, sink.log(), "nothing is replaced before the bookmark")
	cancel()
	<-done
}
