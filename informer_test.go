package listwatch

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/parked"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/selector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// memSource is an in-memory ListerWatcher with a history, so a watch from a
// list's version misses nothing.
type memSource struct {
	mu      sync.Mutex
	rv      int
	objs    map[string]*Object
	history []httpwatch.Event
	changed chan struct{}
	lists   int
}

func newMemSource() *memSource {
	return &memSource{objs: map[string]*Object{}, changed: make(chan struct{})}
}

// Info says nothing of a resource: the source is in memory.
func (s *memSource) Info() httpwatch.SourceInfo { return httpwatch.SourceInfo{} }

func (s *memSource) object(ns, name, label string) *Object {
	s.rv++
	o, err := raw.NewObject(fmt.Appendf(nil,
		`{"metadata":{"name":%q,"namespace":%q,"resourceVersion":"%d","labels":{"app":%q},"managedFields":[{"manager":"x"}]}}`,
		name, ns, s.rv, label))
	if err != nil {
		panic(err)
	}
	return o
}

func (s *memSource) emit(t httpwatch.EventType, o *Object) {
	s.history = append(s.history, httpwatch.Event{Type: t, Object: o})
	close(s.changed)
	s.changed = make(chan struct{})
}

// put creates or updates ns/name with a new version.
func (s *memSource) put(ns, name, label string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.object(ns, name, label)
	t := httpwatch.Added
	if _, ok := s.objs[Key(o)]; ok {
		t = httpwatch.Modified
	}
	s.objs[Key(o)] = o
	s.emit(t, o)
}

func (s *memSource) del(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := ns + "/" + name
	old := s.objs[key]
	delete(s.objs, key)
	s.rv++
	gone, _ := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":%q,"namespace":%q,"resourceVersion":"%d"}}`, old.Name(), ns, s.rv))
	s.emit(httpwatch.Deleted, gone)
}

// forget deletes ns/name without telling watchers, as if the event was lost
// in an outage, and makes every open watch fail with 410.
func (s *memSource) forget(ns, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, ns+"/"+name)
	s.rv++
	s.history = append(s.history, httpwatch.Event{Type: httpwatch.Error,
		Err: &httpwatch.StatusError{Code: 410, Reason: "Expired", Message: "too old"}})
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *memSource) ListPage(_ context.Context, _ httpwatch.ListOptions) (*httpwatch.Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lists++
	p := &httpwatch.Page{ResourceVersion: fmt.Sprint(s.rv)}
	for _, o := range s.objs {
		p.Items = append(p.Items, o)
	}
	return p, nil
}

func (s *memSource) listCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

func (s *memSource) Watch(ctx context.Context, opts httpwatch.ListOptions) (httpwatch.Watcher, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var from int
	_, _ = fmt.Sscan(opts.ResourceVersion, &from)
	// Start after the last event at or below the requested version.
	pos := 0
	for i, e := range s.history {
		if e.Object != nil {
			var rv int
			_, _ = fmt.Sscan(e.Object.ResourceVersion(), &rv)
			if rv <= from {
				pos = i + 1
			}
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	return &memWatch{src: s, pos: pos, ctx: ctx, cancel: cancel}, nil
}

type memWatch struct {
	src        *memSource
	pos        int
	ctx        context.Context
	cancel     context.CancelFunc
	beforeWait func()
}

// NotifyRead makes Next call fn once it has handed out the history and
// waits for a change.
func (w *memWatch) NotifyRead(fn func()) { w.beforeWait = fn }

func (w *memWatch) Next() (httpwatch.Event, error) {
	for {
		w.src.mu.Lock()
		if w.pos < len(w.src.history) {
			e := w.src.history[w.pos]
			w.pos++
			w.src.mu.Unlock()
			return e, nil
		}
		changed := w.src.changed
		w.src.mu.Unlock()
		if w.beforeWait != nil {
			w.beforeWait()
		}
		select {
		case <-changed:
		case <-w.ctx.Done():
			return httpwatch.Event{}, io.EOF
		}
	}
}

func (w *memWatch) Stop() { w.cancel() }

// recorder is a handler that keeps what it was told, as a log and as a view.
type recorder struct {
	mu   sync.Mutex
	log  []string
	view map[string]string // key → resourceVersion
	dups int
}

func newRecorder() *recorder { return &recorder{view: map[string]string{}} }

func (r *recorder) OnAdd(o *Object, initial bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.view[Key(o)]; ok {
		r.dups++
	}
	r.view[Key(o)] = o.ResourceVersion()
	r.log = append(r.log, fmt.Sprintf("add %s initial=%v", Key(o), initial))
}

func (r *recorder) OnUpdate(old, o *Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.view[Key(o)] = o.ResourceVersion()
	r.log = append(r.log, fmt.Sprintf("update %s %s->%s", Key(o), old.ResourceVersion(), o.ResourceVersion()))
}

func (r *recorder) OnDelete(o *Object, unknown bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.view, Key(o))
	r.log = append(r.log, fmt.Sprintf("delete %s unknown=%v", Key(o), unknown))
}

func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.log)
}

func (r *recorder) snapshot() (map[string]string, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	view := map[string]string{}
	for k, v := range r.view {
		view[k] = v
	}
	return view, r.dups
}

func cacheView(inf *Informer) map[string]string {
	view := map[string]string{}
	for _, o := range inf.Indexer().List() {
		view[Key(o)] = o.ResourceVersion()
	}
	return view
}

func startInformer(t *testing.T, src *memSource, resync time.Duration) (*Informer, func()) {
	t.Helper()
	inf := NewInformer(src, resync)
	inf.Reflector.Backoff = reflector.Backoff{Initial: -1} // relist at once: these tests are about the informer
	return inf, func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") })
	}
}

const wait = 10 * time.Second

// conformance 59: adds, updates and deletes reach the cache and handlers in
// order, with the initial list flagged as such.
func TestInformerDeliversChanges(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	inf, run := startInformer(t, src, 0)
	rec := newRecorder()
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	run()
	require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
	src.put("ns", "a", "web")
	src.put("ns", "b", "db")
	// Deltas are grouped per key (see package delta), so wait before the
	// delete to pin the order of the lines.
	require.Eventually(t, func() bool { return len(rec.lines()) == 3 }, wait, time.Millisecond)
	src.del("ns", "a")
	require.Eventually(t, func() bool { return len(rec.lines()) == 4 }, wait, time.Millisecond)
	assert.Equal(t, []string{
		"add ns/a initial=true", "update ns/a 1->2", "add ns/b initial=false", "delete ns/a unknown=false",
	}, rec.lines())
	assert.Equal(t, map[string]string{"ns/b": "3"}, cacheView(inf))
	assert.Equal(t, "4", inf.LastSyncResourceVersion())
	st := inf.Stats()
	assert.Equal(t, 1, st.Objects)
	assert.Zero(t, st.Queued)
	assert.EqualValues(t, 1, st.Lists)
	assert.EqualValues(t, 3, st.Events, "three watch events")
}

// conformance 59, decisions 8 and 11: after a 410 the informer relists; an object
// deleted during the outage is reported with finalStateUnknown, and objects
// that did not change produce no notification for a handler without resync.
func TestInformerRelistNotifiesOnlyChanges(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	src.put("ns", "b", "web")
	src.put("ns", "c", "web")
	inf, run := startInformer(t, src, 0)
	rec := newRecorder()
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	run()
	require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
	src.forget("ns", "b")
	require.Eventually(t, func() bool { return src.listCount() >= 2 }, wait, time.Millisecond)
	src.put("ns", "d", "web") // a marker: once it arrives, the relist has been handled
	require.Eventually(t, func() bool { return len(rec.lines()) == 5 }, wait, time.Millisecond)
	assert.Equal(t, []string{"delete ns/b unknown=true", "add ns/d initial=false"}, rec.lines()[3:])
}

// conformance 66: a handler that joins while events flow first sees the
// cache as initial adds, then every change, with no duplicate and no gap.
func TestInformerLateHandlerSeesConsistentView(t *testing.T) {
	src := newMemSource()
	for i := range 50 {
		src.put("ns", fmt.Sprint("o", i), "web")
	}
	inf, run := startInformer(t, src, 0)
	run()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)

	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprint("o", i%80)
			if i%7 == 3 {
				src.mu.Lock()
				_, ok := src.objs["ns/"+name]
				src.mu.Unlock()
				if ok {
					src.del("ns", name)
					continue
				}
			}
			src.put("ns", name, "web")
		}
	}()
	rec := newRecorder()
	reg, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
	close(stop)
	testwait.Recv(t, writerDone, "the writer to stop")
	src.mu.Lock()
	final := fmt.Sprint(src.rv)
	src.mu.Unlock()
	require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() == final }, wait, time.Millisecond)
	require.Eventually(t, func() bool { return reg.Pending() == 0 }, wait, time.Millisecond)
	require.Eventually(t, func() bool {
		view, _ := rec.snapshot()
		return assert.ObjectsAreEqual(cacheView(inf), view)
	}, wait, time.Millisecond)
	_, dups := rec.snapshot()
	assert.Zero(t, dups, "no object was added twice")
}

// conformance 67: a registration is synced once the informer is and the
// handler returned from every initial add.
func TestRegistrationHasSyncedWaitsForHandler(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	inf, run := startInformer(t, src, 0)
	release := make(chan struct{})
	reg, err := inf.AddEventHandler(HandlerFuncs{AddFunc: func(*Object, bool) { <-release }})
	require.NoError(t, err)
	run()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)
	assert.False(t, reg.HasSynced(), "the handler is still in its initial add")
	close(release)
	require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
}

// conformance 69 71: lifecycle errors.
func TestInformerLifecycle(t *testing.T) {
	src := newMemSource()
	inf := NewInformer(src, 0)
	assert.Equal(t, "", inf.LastSyncResourceVersion(), "conformance 71: no version before Run")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)

	inf.Run(ctx) // conformance 71: a second Run returns at once
	assert.False(t, inf.IsStopped())

	cancel()
	testwait.Recv(t, done, "Run to return after cancel")
	assert.True(t, inf.IsStopped(), "conformance 69")
	_, err := inf.AddEventHandler(newRecorder())
	assert.ErrorIs(t, err, processor.ErrStopped, "conformance 69")
	assert.ErrorIs(t, inf.AddIndexers(indexer.Indexers[*Object]{"x": indexer.NamespaceIndex[*Object]}), processor.ErrStopped, "conformance 55")
}

// conformance 61: handler resync periods.
func TestHandlerResyncPeriods(t *testing.T) {
	src := newMemSource()
	inf := NewInformer(src, time.Minute)
	r1, err := inf.AddEventHandlerWithResync(newRecorder(), 100*time.Millisecond)
	require.NoError(t, err)
	assert.Equal(t, time.Second, r1.ResyncPeriod(), "raised to the 1 s minimum")
	assert.Equal(t, time.Second, inf.checkPeriod, "before start, a shorter period shortens the check period")

	none := NewInformer(src, 0)
	r2, err := none.AddEventHandlerWithResync(newRecorder(), time.Minute)
	require.NoError(t, err)
	assert.Zero(t, r2.ResyncPeriod(), "an informer without resync gives handlers none")

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)
	inf.mu.Lock()
	inf.checkPeriod = 30 * time.Second
	inf.mu.Unlock()
	r3, err := inf.AddEventHandlerWithResync(newRecorder(), 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, r3.ResyncPeriod(), "after start, raised to the check period")
}

// conformance 73: cancelling Run stops every handler goroutine before it
// returns (goleak checks the rest).
func TestInformerRunStopsHandlers(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	inf := NewInformer(src, 0)
	entered := make(chan struct{})
	release := make(chan struct{})
	_, err := inf.AddEventHandler(HandlerFuncs{AddFunc: func(*Object, bool) { close(entered); <-release }})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	testwait.Recv(t, entered, "the handler to get its initial add")
	cancel()
	require.Eventually(t, func() bool { return inf.fifo.IsClosed() }, wait, time.Millisecond)
	// Either Run has returned, or it and the processor are parked waiting
	// with the reflector gone, the handler being all that holds them.
	require.Eventually(t, func() bool {
		select {
		case <-done:
			return true
		default:
			return !parked.Running("reflector.(*Reflector).Run(") &&
				parked.In("processor.(*Processor[...]).Run(", "sync.WaitGroup.Wait") &&
				parked.In("listwatch.(*Informer).Run(", "sync.WaitGroup.Wait")
		}
	}, wait, time.Millisecond)
	select {
	case <-done:
		t.Fatal("Run returned while a handler was still running")
	default:
	}
	close(release)
	testwait.Recv(t, done, "Run to return once the handler is released")
}

func TestLister(t *testing.T) {
	src := newMemSource()
	src.put("ns1", "a", "web")
	src.put("ns1", "b", "db")
	src.put("ns2", "c", "web")
	inf, run := startInformer(t, src, 0)
	run()
	require.Eventually(t, inf.HasSynced, wait, time.Millisecond)
	l := inf.Lister()

	names := func(objs []*Object) []string {
		var out []string
		for _, o := range objs {
			out = append(out, Key(o))
		}
		slices.Sort(out)
		return out
	}
	all, err := l.List("")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns1/a", "ns1/b", "ns2/c"}, names(all))
	web, err := l.List("app in (web, api)")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns1/a", "ns2/c"}, names(web))
	ns1web, err := l.ByNamespace("ns1").List("app=web")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns1/a"}, names(ns1web))
	notDB, err := l.List("app!=db,app")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns1/a", "ns2/c"}, names(notDB))

	_, err = l.List("app in (web")
	assert.ErrorContains(t, err, "list")

	o, err := l.ByNamespace("ns2").Get("c")
	require.NoError(t, err)
	assert.Equal(t, "c", o.Name())
	_, err = l.ByNamespace("ns1").Get("c")
	assert.True(t, httpwatch.IsNotFound(err), "c lives in ns2: %v", err)
	_, err = l.ByNamespace("ns1").List("app in (web")
	assert.ErrorContains(t, err, "ns1")

	parsed, err := selector.Parse("app=web")
	require.NoError(t, err)
	assert.Equal(t, []string{"ns1/a", "ns2/c"}, names(l.Select(parsed)), "a parsed selector")
	assert.Equal(t, []string{"ns2/c"}, names(l.ByNamespace("ns2").Select(parsed)))
	_, err = l.Get("ns1", "zzz")
	assert.True(t, httpwatch.IsNotFound(err), "a missing object is NotFound: %v", err)
}
