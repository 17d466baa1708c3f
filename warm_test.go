package listwatch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warmRig is a fake server, a client of it, a snapshot directory and a
// fake clock: what a process restarting on one node has.
type warmRig struct {
	s      *watchtest.Server
	client *httpwatch.Client
	dir    string
	clock  *clock.Fake
	names  map[string]string // pod name → resourceVersion at creation
}

func newWarmRig(t *testing.T, pods ...string) *warmRig {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	r := &warmRig{s: s, client: client, dir: t.TempDir(), clock: clock.NewFake(time.Unix(1_000_000, 0)), names: map[string]string{}}
	for _, name := range pods {
		raw, err := s.Create(watchtest.Pods, podJSON(name, "1"))
		require.NoError(t, err)
		r.names[name] = raw.ResourceVersion()
	}
	return r
}

// informer returns an informer of the rig's pods keeping snapshots.
func (r *warmRig) informer(configure ...func(*Informer, *httpwatch.ResourceClient)) (*Informer, *testlog.Log) {
	rc := r.client.Resource(podsRes)
	inf := NewInformer(rc, 0)
	inf.Reflector.PagedList = true
	inf.Reflector.Backoff = reflector.Backoff{Initial: -1} // relist at once
	inf.Clock = r.clock
	inf.Snapshot = snapshot.Options{Dir: r.dir}
	log := &testlog.Log{}
	inf.Logger = slog.New(log)
	for _, c := range configure {
		c(inf, rc)
	}
	return inf, log
}

// run runs inf until the returned stop, which waits for Run to return.
func run(t *testing.T, inf *Informer) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			testwait.Recv(t, done, "Run to return after cancel")
		}
	}
	t.Cleanup(stop)
	return stop
}

// coldRun syncs an informer, stops it, and returns the version it saved.
func (r *warmRig) coldRun(t *testing.T) string {
	t.Helper()
	inf, _ := r.informer()
	stop := run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() != "" }, wait, time.Millisecond)
	rv := inf.LastSyncResourceVersion()
	// Its watch is open, so no request of it reaches the server later.
	require.NoError(t, r.s.WaitForWatches(testwait.Context(t), 1))
	stop()
	snap, err := snapshot.ReadFile(r.path(), r.key(), snapshot.Limits{})
	require.NoError(t, err, "a snapshot is saved at stop")
	require.Equal(t, rv, snap.ResourceVersion)
	return rv
}

func (r *warmRig) path() string { return filepath.Join(r.dir, "pods.v1.snap") }

func (r *warmRig) key() snapshot.Key {
	k, _ := snapshotKey(r.client.Resource(podsRes), &Informer{}, snapshot.Options{})
	return k
}

// requestsSince returns "verb rv" of each request after the first n.
func (r *warmRig) requestsSince(n int) []string {
	var out []string
	for _, q := range r.s.Requests()[n:] {
		out = append(out, q.Verb+" "+q.Query.Get("resourceVersion"))
	}
	return out
}

// decision 32: a restart restores the snapshot (handlers hear its objects
// as initial adds), makes no list, watches from the snapshot's version and
// hears the changes made while it was down as what they are. It says so
// at Info, twice: how many objects it restored from which version, then
// that the server confirmed them and nothing was listed; Stats keeps both.
func TestWarmStartResumesWithoutList(t *testing.T) {
	r := newWarmRig(t, "keep", "change", "remove")
	saved := r.coldRun(t)

	raw, err := r.s.Update(watchtest.Pods, podJSON("change", "2"))
	require.NoError(t, err)
	changed := raw.ResourceVersion()
	_, err = r.s.Delete(watchtest.Pods, "ns", "remove")
	require.NoError(t, err)
	_, err = r.s.Create(watchtest.Pods, podJSON("new", "1"))
	require.NoError(t, err)

	before := len(r.s.Requests())
	inf, log := r.informer()
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	run(t, inf)
	testwait.Recv(t, inf.warm.loaded, "the snapshot to be loaded")
	require.NoError(t, inf.Wait(testwait.Context(t)))
	// Wait returns once HasSynced, which may be just before the informer
	// says how its warm start ended; the line is said before Synced closes.
	testwait.Recv(t, inf.warm.synced, "the warm start's outcome said")
	require.Eventually(t, func() bool { return len(rec.lines()) == 6 }, wait, time.Millisecond, "%q", rec.lines())

	lines := rec.lines()
	initial := slices.Clone(lines[:3])
	slices.Sort(initial)
	assert.Equal(t, []string{"add ns/change initial=true", "add ns/keep initial=true", "add ns/remove initial=true"}, initial)
	assert.Equal(t, []string{
		fmt.Sprintf("update ns/change %s->%s", r.names["change"], changed),
		"delete ns/remove unknown=false",
		"add ns/new initial=false",
	}, lines[3:])
	assert.Equal(t, []string{"watch " + saved}, r.requestsSince(before), "no list: one watch from the saved version")
	assert.Equal(t, serverView(t, r.s), cacheView(inf))
	assert.False(t, inf.restored())
	assert.Equal(t, []string{
		"INFO informer: restored snapshot; awaiting the server's confirmation resource=pods.v1 objects=3 resourceVersion=" + saved + " path=" + r.path(),
		"INFO informer: warm start confirmed by the server; listed nothing resource=pods.v1 objects=3 resourceVersion=" + saved,
	}, log.Above(), "a warm start says so, and nothing else")
	st := inf.Stats()
	assert.Equal(t, 3, st.Snapshot.Restored)
	assert.Equal(t, saved, st.Snapshot.RestoredVersion)
	assert.Zero(t, st.Lists)
}

// said is what log holds above Debug, each line cut before its attributes.
func said(log *testlog.Log) []string {
	var out []string
	for _, l := range log.Above() {
		text, _, _ := strings.Cut(l, " resource=")
		out = append(out, text)
	}
	return out
}

func serverView(t *testing.T, s *watchtest.Server) map[string]string {
	view := map[string]string{}
	for _, o := range s.List(watchtest.Pods, "") {
		view[Key(o)] = o.ResourceVersion()
	}
	return view
}

// decision 32: with nothing changed, the restored cache is readable at
// once and marked Restored; the informer is synced only once the resumed
// watch has carried an event or stayed open for ConfirmAfter without an
// error.
func TestWarmStartIsConfirmedByTheWatch(t *testing.T) {
	for _, by := range []string{"bookmark", "grace"} {
		t.Run(by, func(t *testing.T) {
			r := newWarmRig(t, "a", "b")
			r.coldRun(t)
			inf, _ := r.informer()
			run(t, inf)
			testwait.Recv(t, inf.warm.loaded, "the snapshot to be loaded")
			require.Len(t, inf.Indexer().List(), 2, "readable at once")
			// The server answered the resumed watch: it gets what is sent now.
			require.Eventually(t, func() bool { return inf.Stats().Watches == 1 }, wait, time.Millisecond)
			assert.True(t, inf.restored())
			assert.False(t, inf.HasSynced(), "an open watch alone proves nothing: a 410 may follow")
			switch by {
			case "bookmark":
				r.s.SendBookmarks()
			case "grace":
				require.NoError(t, r.clock.WaitForWaiters(testwait.Context(t), 1))
				r.clock.Step(snapshot.DefaultConfirmAfter)
			}
			testwait.Recv(t, inf.warm.synced, "the watch to confirm the snapshot")
			assert.False(t, inf.restored())
		})
	}
}

// decision 32: with the server unreachable (an edge node offline), the
// restored cache is readable at once, its objects heard as initial adds,
// and marked Restored, not synced, for as long as no server confirms it.
func TestWarmStartServesTheCacheWhileTheServerIsDown(t *testing.T) {
	r := newWarmRig(t, "a", "b")
	r.coldRun(t)
	r.s.Close()
	inf, _ := r.informer()
	rec := newRecorder()
	_, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	run(t, inf)
	testwait.Recv(t, inf.warm.loaded, "the snapshot to be loaded with no server")
	assert.Equal(t, map[string]string{"ns/a": r.names["a"], "ns/b": r.names["b"]}, cacheView(inf))
	require.Eventually(t, func() bool { return len(rec.lines()) == 2 }, wait, time.Millisecond, "%q", rec.lines())
	assert.True(t, inf.restored())
	assert.False(t, inf.HasSynced())
	select {
	case <-inf.warm.synced:
		t.Fatal("synced with no server")
	default:
	}
}

// decision 32, decision 8: a snapshot whose version the server forgot
// (410) falls back to a relist; handlers hear only what changed.
func TestWarmStartAfterCompactionRelists(t *testing.T) {
	r := newWarmRig(t, "keep", "change", "remove")
	r.coldRun(t)
	raw, err := r.s.Update(watchtest.Pods, podJSON("change", "2"))
	require.NoError(t, err)
	changed := raw.ResourceVersion()
	_, err = r.s.Delete(watchtest.Pods, "ns", "remove")
	require.NoError(t, err)
	_, err = r.s.Create(watchtest.Pods, podJSON("new", "1"))
	require.NoError(t, err)
	require.NoError(t, r.s.Compact(r.s.ResourceVersion()))

	before := len(r.s.Requests())
	inf, log := r.informer()
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return len(rec.lines()) == 6 }, wait, time.Millisecond, "%q", rec.lines())
	relist := rec.lines()[3:]
	slices.Sort(relist)
	assert.Equal(t, []string{
		"add ns/new initial=true",
		"delete ns/remove unknown=true",
		fmt.Sprintf("update ns/change %s->%s", r.names["change"], changed),
	}, relist, "ns/keep, unchanged, is not heard of again")
	var verbs []string
	for _, q := range r.requestsSince(before) {
		verbs = append(verbs, strings.Fields(q)[0])
	}
	assert.Equal(t, []string{"watch", "list"}, verbs[:2], "the watch from the snapshot's version, its 410, one relist")
	assert.Equal(t, 1, strings.Count(strings.Join(verbs, " "), "list"))
	assert.Equal(t, serverView(t, r.s), cacheView(inf))
	assert.Equal(t, []string{"INFO informer: restored snapshot; awaiting the server's confirmation", "INFO informer: restored snapshot out of date; listed instead"}, said(log))
}

// decision 32: a snapshot of anything else than what the informer reads
// is not used: one Info line, the file removed, a list. An informer of
// other selectors or another projection is another identity (decision
// 38): it keeps a file of its own and leaves the other's alone.
func TestWarmStartMismatchIsIgnored(t *testing.T) {
	for name, change := range map[string]func(*Informer, *httpwatch.ResourceClient){
		"labelSelector": func(inf *Informer, _ *httpwatch.ResourceClient) { inf.sel.Label = "v=1" },
		"fieldSelector": func(inf *Informer, _ *httpwatch.ResourceClient) {
			inf.sel.Field = "metadata.namespace=ns"
		},
		"projection": func(_ *Informer, rc *httpwatch.ResourceClient) {
			p, err := raw.NewProjection("metadata")
			if err != nil {
				panic(err)
			}
			rc.Projection = p
		},
		"managedFields": func(_ *Informer, rc *httpwatch.ResourceClient) { rc.KeepManagedFields = true },
		"transform": func(inf *Informer, rc *httpwatch.ResourceClient) {
			rc.Transform = func(o *raw.Object) (*raw.Object, error) { return o, nil }
			inf.Snapshot.TransformVersion = "v2"
		},
		"identity": func(inf *Informer, _ *httpwatch.ResourceClient) { inf.Snapshot.Identity = "shard 3" },
	} {
		t.Run(name, func(t *testing.T) {
			r := newWarmRig(t, "a")
			r.coldRun(t)
			cold, err := os.ReadFile(r.path())
			require.NoError(t, err)
			before := len(r.s.Requests())
			inf, log := r.informer(change)
			run(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			assert.Contains(t, r.requestsSince(before), "list 0", "listed")
			above := log.Above()
			if inf.Identity().selection() != "" {
				// Another identity (decision 41): a file of its own, and
				// the other's snapshot left alone.
				assert.Empty(t, above)
				now, err := os.ReadFile(r.path())
				require.NoError(t, err)
				assert.Equal(t, cold, now)
				return
			}
			require.Len(t, above, 1, "%q", above)
			assert.True(t, strings.HasPrefix(above[0], "INFO informer: snapshot not used"), above[0])
			assert.Contains(t, above[0], "differs")
			// Removed; the new informer saves its own once synced
			// (decision 32), which may already be there.
			if now, err := os.ReadFile(r.path()); err == nil {
				assert.NotEqual(t, cold, now, "the snapshot not used is removed")
			}
		})
	}
}

// decision 32: a snapshot of another server is not used either.
func TestWarmStartOtherServerIsIgnored(t *testing.T) {
	r := newWarmRig(t, "a")
	r.coldRun(t)
	other := newWarmRig(t, "a")
	other.dir = r.dir
	inf, log := other.informer()
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Len(t, log.Above(), 1)
	assert.Contains(t, log.Above()[0], "server differs")
}

// decision 32: a corrupt, cut or foreign-version snapshot is refused with
// one Warn (Info for the version) and removed; the informer lists, its
// cache holding only what the server has.
func TestWarmStartCorruptSnapshotIsIgnored(t *testing.T) {
	for name, spoil := range map[string]func([]byte) []byte{
		"flipped": func(b []byte) []byte { b[len(b)/2] ^= 1; return b },
		"cut":     func(b []byte) []byte { return b[:len(b)-3] },
		"empty":   func([]byte) []byte { return nil },
		"version": func(b []byte) []byte { b[7]++; return b },
	} {
		t.Run(name, func(t *testing.T) {
			r := newWarmRig(t, "a", "b")
			r.coldRun(t)
			b, err := os.ReadFile(r.path())
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(r.path(), spoil(b), 0o600))
			_, err = r.s.Delete(watchtest.Pods, "ns", "b")
			require.NoError(t, err)

			inf, log := r.informer()
			run(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			assert.Equal(t, serverView(t, r.s), cacheView(inf))
			above := log.Above()
			require.Len(t, above, 1, "%q", above)
			want := "WARN informer: snapshot unreadable"
			if name == "version" {
				want = "INFO informer: snapshot not used"
			}
			assert.True(t, strings.HasPrefix(above[0], want), above[0])
		})
	}
}

// decision 32: a snapshot whose checksum is right but which holds two
// objects of one key, or one without a name, is dropped whole: a Warn, a
// list, nothing of it in the cache or heard of.
func TestWarmStartRefusesObjectsWithoutAKeyOfTheirOwn(t *testing.T) {
	for name, objs := range map[string][]string{
		"twice":    {`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}`, `{"metadata":{"name":"a","namespace":"ns","resourceVersion":"6"}}`},
		"nameless": {`{"metadata":{"name":"a","namespace":"ns","resourceVersion":"5"}}`, `{"metadata":{"namespace":"ns"}}`},
	} {
		t.Run(name, func(t *testing.T) {
			r := newWarmRig(t, "b")
			snap := &snapshot.Snapshot{Key: r.key(), ResourceVersion: r.names["b"], Written: r.clock.Now()}
			for _, js := range objs {
				o, err := raw.NewObject([]byte(js))
				require.NoError(t, err)
				snap.Objects = append(snap.Objects, o)
			}
			require.NoError(t, snapshot.WriteFile(r.path(), snap))
			inf, log := r.informer()
			rec := newRecorder()
			_, err := inf.AddEventHandler(rec)
			require.NoError(t, err)
			run(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			require.Eventually(t, func() bool { return len(rec.lines()) == 1 }, wait, time.Millisecond, "%q", rec.lines())
			assert.Equal(t, []string{"add ns/b initial=true"}, rec.lines())
			assert.Equal(t, serverView(t, r.s), cacheView(inf))
			assertSnapshotDropped(t, log)
		})
	}
}

// decision 32: a snapshot older than MaxAge is not used.
func TestWarmStartTooOldIsIgnored(t *testing.T) {
	r := newWarmRig(t, "a")
	r.coldRun(t)
	r.clock.Step(snapshot.DefaultMaxAge + time.Minute)
	before := len(r.s.Requests())
	inf, log := r.informer()
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	assert.Contains(t, r.requestsSince(before), "list 0")
	require.Len(t, log.Above(), 1)
	assert.Contains(t, log.Above()[0], "too old")
}

// decision 32: a Transform whose version is not named keeps no snapshot.
func TestWarmStartNeedsTransformVersion(t *testing.T) {
	r := newWarmRig(t, "a")
	inf, log := r.informer(func(_ *Informer, rc *httpwatch.ResourceClient) {
		rc.Transform = func(o *raw.Object) (*raw.Object, error) { return o, nil }
	})
	stop := run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	stop()
	assert.NoFileExists(t, r.path())
	require.Len(t, log.Above(), 1)
	assert.Contains(t, log.Above()[0], "TransformVersion")
}

// decision 32: the cache is saved after the first sync, then every
// Interval while its version moves, by the informer's clock, and not when
// nothing moved.
func TestSnapshotIsSavedAtInterval(t *testing.T) {
	r := newWarmRig(t, "a")
	inf, _ := r.informer()
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	first := inf.LastSyncResourceVersion()
	require.Eventually(t, func() bool { // the save right after the first sync
		snap, err := snapshot.ReadFile(r.path(), r.key(), snapshot.Limits{})
		return err == nil && snap.ResourceVersion == first
	}, wait, time.Millisecond)

	raw, err := r.s.Update(watchtest.Pods, podJSON("a", "2"))
	require.NoError(t, err)
	rv := raw.ResourceVersion()
	require.Eventually(t, func() bool { return inf.LastSyncResourceVersion() == rv }, wait, time.Millisecond)
	require.Eventually(t, func() bool {
		r.clock.Step(snapshot.DefaultInterval)
		snap, err := snapshot.ReadFile(r.path(), r.key(), snapshot.Limits{})
		return err == nil && snap.ResourceVersion == rv
	}, wait, time.Millisecond)
	st, err := os.Stat(r.path())
	require.NoError(t, err)
	r.clock.Step(snapshot.DefaultInterval)
	require.NoError(t, r.clock.WaitForWaiters(testwait.Context(t), 1))
	st2, err := os.Stat(r.path())
	require.NoError(t, err)
	assert.Equal(t, st.ModTime(), st2.ModTime(), "nothing moved: not written again")
}

// decision 32: a Factory's Snapshot gives each informer a file of its own.
func TestFactorySnapshots(t *testing.T) {
	r := newWarmRig(t, "a")
	_, err := r.s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"c","namespace":"ns"}}`)
	require.NoError(t, err)
	f := NewFactory(r.client)
	f.Snapshot = snapshot.Options{Dir: r.dir}
	f.ForResource(podsRes)
	f.ForResource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "ns"})
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	require.NoError(t, f.Wait(testwait.Context(t)))
	cancel()
	f.Shutdown()
	assert.FileExists(t, filepath.Join(r.dir, "pods.v1.snap"))
	assert.FileExists(t, filepath.Join(r.dir, "configmaps.v1_ns.snap"))

	before := len(r.s.Requests())
	f = NewFactory(r.client)
	f.Snapshot = snapshot.Options{Dir: r.dir}
	pods := f.ForResource(podsRes)
	cms := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "ns"})
	ctx, cancel = context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ctx)
	testwait.Recv(t, pods.warm.loaded, "pods restored")
	testwait.Recv(t, cms.warm.loaded, "configmaps restored")
	require.Eventually(t, func() bool { return pods.Stats().Watches == 1 && cms.Stats().Watches == 1 }, wait, time.Millisecond)
	r.s.SendBookmarks()
	require.NoError(t, f.Wait(testwait.Context(t)))
	for _, q := range r.requestsSince(before) {
		assert.True(t, strings.HasPrefix(q, "watch "), "no list: %q", q)
	}
}

// decision 32: the cache is copied for a snapshot only when every queued
// change is applied, so that the version saved is one it holds entirely.
func TestSnapshotWaitsForAnIdleQueue(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "x")
	inf, start := startInformer(t, src, 0)
	inf.Snapshot = snapshot.Options{Dir: t.TempDir(), Identity: "memSource"}
	start()
	require.NoError(t, inf.Wait(testwait.Context(t)))
	_, ok := func() ([]*Object, bool) { inf.mu.Lock(); defer inf.mu.Unlock(); return inf.captureLocked() }()
	require.True(t, ok, "idle")

	inf.mu.Lock() // holds off apply
	src.put("ns", "b", "x")
	require.Eventually(t, func() bool { return inf.fifo.Len() == 0 && !inf.fifo.Idle() }, wait, time.Millisecond, "the change popped, waiting to be applied")
	objs, ok := inf.captureLocked()
	inf.mu.Unlock()
	assert.False(t, ok, "a change is popped but not applied")
	assert.Nil(t, objs)
}

// decision 32: the server a snapshot is keyed by carries no user
// information, and is written only hashed.
func TestSnapshotKeyHasNoCredentials(t *testing.T) {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://agent:s3cret@10.0.0.1:6443/base"})
	require.NoError(t, err)
	rc := client.Resource(podsRes)
	assert.Equal(t, "https://10.0.0.1:6443/base", rc.Server())
	key, err := snapshotKey(rc, NewInformer(rc, 0), snapshot.Options{})
	require.NoError(t, err)
	assert.NotContains(t, fmt.Sprint(key), "s3cret")
}

// assertSnapshotDropped checks that the informer said, once and at Warn,
// that it dropped an unreadable snapshot, and nothing else above Debug.
func assertSnapshotDropped(t *testing.T, log *testlog.Log) {
	t.Helper()
	above := log.Above()
	require.Len(t, above, 1, "%q", above)
	assert.True(t, strings.HasPrefix(above[0], "WARN informer: snapshot unreadable"), above[0])
}

// decision 41, decision 32: two informers of one resource with different
// selectors, sharing a snapshot directory, keep a file each, named after
// their identities, and each restarts warm from its own. Before identities
// named the files, both wrote pods.v1.snap and each found the other's
// snapshot mismatched at every restart.
func TestInformersOfOneResourceKeepSnapshotsApart(t *testing.T) {
	r := newWarmRig(t)
	for _, p := range []string{
		`{"metadata":{"name":"w","namespace":"ns","labels":{"app":"web"}}}`,
		`{"metadata":{"name":"d","namespace":"ns","labels":{"app":"db"}}}`,
	} {
		_, err := r.s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	start := func(app string) (*Informer, *testlog.Log, func()) {
		inf, log := r.informer(func(inf *Informer, _ *httpwatch.ResourceClient) { inf.sel.Label = "app=" + app })
		stop := run(t, inf)
		return inf, log, stop
	}
	web, _, stopWeb := start("web")
	db, _, stopDB := start("db")
	require.NoError(t, web.Wait(testwait.Context(t)))
	require.NoError(t, db.Wait(testwait.Context(t)))
	assert.Equal(t, "pods.v1 (labels app=web)", web.Name())
	assert.Equal(t, "pods.v1 (labels app=db)", db.Name())
	stopWeb()
	stopDB()
	files, err := filepath.Glob(filepath.Join(r.dir, "*.snap"))
	require.NoError(t, err)
	assert.Len(t, files, 2, "a file per identity: %v", files)

	for _, app := range []string{"web", "db"} {
		inf, log, stop := start(app)
		require.Eventually(t, func() bool { return inf.Stats().Watches == 1 }, wait, time.Millisecond)
		r.s.SendBookmarks()
		require.NoError(t, inf.Wait(testwait.Context(t)))
		assert.Equal(t, 1, inf.Stats().Snapshot.Restored, "%s restarted from its own snapshot", app)
		assert.Zero(t, inf.Stats().Lists, "%s listed nothing", app)
		assert.Equal(t, []string{
			"INFO informer: restored snapshot; awaiting the server's confirmation",
			"INFO informer: warm start confirmed by the server; listed nothing",
		}, said(log))
		stop()
	}
}
