package reflector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testwait"
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

// Info names no resource; noWL says the source serves no watch-list.
func (s *scriptSource) Info() httpwatch.SourceInfo { return httpwatch.SourceInfo{WatchList: !s.noWL} }

func page(rv, cont string, objs ...*raw.Object) func(httpwatch.ListOptions) (*httpwatch.Page, error) {
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
	ctx        context.Context
	total      int // steps scripted
	steps      []watchStep
	stopped    chan struct{}
	once       sync.Once
	beforeWait func() // see NotifyRead
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
	if w.beforeWait != nil {
		w.beforeWait()
	}
	select {
	case <-w.stopped:
	case <-done:
	}
	return httpwatch.Event{}, io.EOF
}

func (w *scriptWatcher) Stop() { w.once.Do(func() { close(w.stopped) }) }

// NotifyRead makes Next call fn once its steps are taken, before it blocks:
// the steps are one read.
func (w *scriptWatcher) NotifyRead(fn func()) { w.beforeWait = fn }

func ev(t httpwatch.EventType, o *raw.Object) watchStep {
	return watchStep{ev: httpwatch.Event{Type: t, Object: o}}
}
func errEv(err error) watchStep {
	return watchStep{ev: httpwatch.Event{Type: httpwatch.Error, Err: err}}
}
func end(err error) watchStep { return watchStep{err: err} }

func obj(name, rv string) *raw.Object {
	o, err := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":"ns","resourceVersion":%q}}`, name, rv))
	if err != nil {
		panic(err)
	}
	return o
}

func endBookmark(rv string) *raw.Object {
	o, err := raw.NewObject(fmt.Appendf(nil, `{"kind":"Pod","metadata":{"resourceVersion":%q,"annotations":{"k8s.io/initial-events-end":"true"}}}`, rv))
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

func (s *recordSink) Add(o *raw.Object) error {
	return s.add("add %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Update(o *raw.Object) error {
	return s.add("update %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Delete(o *raw.Object) error {
	return s.add("delete %s@%s", o.Name(), o.ResourceVersion())
}
func (s *recordSink) Replace(items []*raw.Object, rv string) error {
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
	r.PagedList = true
	c := clock.NewFake(time.Unix(1000, 0))
	r.Clock = c
	r.Random = func() float64 { return 0 }
	return r, sink, c
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

// A Sink's consumer may call the informer synced the moment Replace hands
// it the items, so the version is published before: whoever sees the
// cache synced reads its version. A refused Replace leaves the old one.
func TestReflectorPublishesVersionBeforeReplace(t *testing.T) {
	w := newWatcher(ev(httpwatch.Added, obj("a", "3")), ev(httpwatch.Bookmark, endBookmark("9")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("5", "", obj("a", "5")), page("6", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	r, _, _ := newTestReflector(src)
	sink := &versionSink{r: r, fail: map[string]error{"6": errors.New("sink closed")}}
	r.Sink = sink
	s, _ := r.step(context.Background(), at(phaseList, memory{}))
	assert.Equal(t, "5", r.LastSyncResourceVersion(), "published by the list")
	_, _ = r.step(context.Background(), s.to(phaseList))
	assert.Equal(t, "5", r.LastSyncResourceVersion(), "a refused Replace takes its version back")
	s, _ = r.step(context.Background(), at(phaseWatchList, memory{}))
	for range 2 {
		s, _ = r.step(context.Background(), s)
	}
	s.closeWatch()
	assert.Equal(t, []string{"5", "6", "9"}, sink.seen, "the version each Replace found published")
}

// versionSink records what LastSyncResourceVersion said during each Replace.
type versionSink struct {
	recordSink
	r    *Reflector
	fail map[string]error
	seen []string
}

func (s *versionSink) Replace(_ []*raw.Object, rv string) error {
	s.seen = append(s.seen, s.r.LastSyncResourceVersion())
	return s.fail[rv]
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
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

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
	// Stats count the list inside the step; the version is published when
	// the step returns, so it is awaited, not read at once.
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "11" }, 10*time.Second, time.Millisecond,
		"the relist's version is published")
}

// conformance 18: an event carrying another kind of object (or a Table) is
// dropped and reported; the watch goes on. A Table of meta.k8s.io is never
// an object of the resource, so it is dropped even with no ExpectedKind,
// while a kind named Table of another group is an object.
func TestReflectorDropsUnexpectedKinds(t *testing.T) {
	object := func(kind, apiVersion, name string) *raw.Object {
		o, err := raw.NewObject(fmt.Appendf(nil, `{"kind":%q,"apiVersion":%q,"metadata":{"name":%q,"namespace":"ns","resourceVersion":"7"}}`, kind, apiVersion, name))
		require.NoError(t, err)
		return o
	}
	for _, tc := range []struct {
		name, expected string
		events         []*raw.Object
		added          []string
		dropped        int
	}{
		{"ExpectedKind Pod", "Pod", []*raw.Object{object("ConfigMap", "v1", "wrong"), object("Table", "meta.k8s.io/v1", "table"), object("Pod", "v1", "right")},
			[]string{"add right@7"}, 2},
		{"no ExpectedKind", "", []*raw.Object{object("Table", "meta.k8s.io/v1", "table"), object("Table", "example.com/v1", "mine"), object("ConfigMap", "v1", "cm")},
			[]string{"add mine@7", "add cm@7"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var steps []watchStep
			for _, o := range tc.events {
				steps = append(steps, ev(httpwatch.Added, o))
			}
			r, sink, _ := newTestReflector(&scriptSource{})
			r.ExpectedKind = tc.expected
			var errs []error
			r.OnError = func(err error) { errs = append(errs, err) }
			s := started(streamOf(newWatcher(steps...), memory{}))
			for range steps {
				s, _ = r.step(context.Background(), s)
				require.Equal(t, phaseStream, s.phase, "the watch goes on")
			}
			s.closeWatch()
			assert.Equal(t, tc.added, sink.log())
			require.Len(t, errs, tc.dropped)
			for _, err := range errs {
				assert.ErrorIs(t, err, ErrUnexpectedKind)
			}
		})
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
	r.PagedList = false
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
	testwait.Recv(t, done, "Run to return after cancel")
}
