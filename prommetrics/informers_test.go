package prommetrics

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// agent is a factory of pods over a fake API server, with snapshots, its
// metrics served over HTTP.
type agent struct {
	f       *listwatch.Factory
	pods    *listwatch.Informer
	metrics string
	stop    func()
}

func startAgent(t *testing.T, host, dir string) *agent {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: host, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	f := listwatch.NewFactory(client)
	f.Snapshot = snapshot.Options{Dir: dir}
	f.Configure = func(_ httpwatch.Resource, inf *listwatch.Informer) {
		inf.Reflector.PagedList = true
		inf.Reflector.Backoff = reflector.Backoff{Initial: -1} // retry at once
	}
	a := &agent{f: f, pods: f.ForResource(watchtest.Pods)}
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Factory: f}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	a.metrics = srv.URL + "/metrics"
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	a.stop = func() { cancel(); f.Shutdown() }
	t.Cleanup(a.stop)
	return a
}

func createPod(t *testing.T, s *watchtest.Server, name string) {
	t.Helper()
	_, err := s.Create(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"spec":{"nodeName":"n1"}}`, name))
	require.NoError(t, err)
}

// What an agent's operator reads of each cache, scraped over HTTP: synced,
// size, errors by kind, watch restarts by cause, the last sync, the
// snapshots; and, restarted without its server, a warm start not yet
// confirmed.
func TestScrapeInformerHealth(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	createPod(t, s, "a")
	createPod(t, s, "b")
	s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"list"}})
	dir := t.TempDir()
	started := time.Now()
	a := startAgent(t, s.URL, dir)
	// The 403 ends a wait at once (decision 37); the informer retries and
	// syncs, and a later wait says so.
	require.Eventually(t, func() bool { return a.f.Wait(testwait.Context(t)) == nil }, wait, 5*time.Millisecond)
	pods := map[string]string{"resource": "pods.v1", "namespace": ""}
	with := func(k, v string) map[string]string { return map[string]string{"resource": "pods.v1", k: v} }

	var sc exampletest.Scraped
	require.Eventually(t, func() bool {
		sc = exampletest.Scrape(t, a.metrics)
		return sc.Value("listwatch_snapshot_last_save_timestamp_seconds", pods) > 0
	}, wait, 5*time.Millisecond, "the snapshot after the first sync")
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_synced", pods))
	assert.Zero(t, sc.Value("listwatch_informer_restored_objects", pods))
	assert.Equal(t, 2.0, sc.Value("listwatch_informer_objects", pods))
	var size int
	for _, o := range a.pods.Indexer().List() {
		size += len(o.Raw())
	}
	assert.Equal(t, float64(size), sc.Value("listwatch_informer_bytes", pods))
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_lists_total", pods))
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_sync_errors_total", with("kind", "permanent")), "the 403")
	assert.Zero(t, sc.Value("listwatch_informer_sync_errors_total", with("kind", "transient")))
	assert.GreaterOrEqual(t, sc.Value("listwatch_informer_last_sync_timestamp_seconds", pods), float64(started.Unix()))
	fi, err := os.Stat(filepath.Join(dir, "pods.v1.snap"))
	require.NoError(t, err)
	assert.Equal(t, float64(fi.Size()), sc.Value("listwatch_snapshot_bytes", pods))
	assert.GreaterOrEqual(t, sc.Value("listwatch_snapshot_save_duration_seconds", pods), 0.0)
	assert.Zero(t, sc.Value("listwatch_snapshot_save_failures_total", pods))
	for _, cause := range []string{"timeout", "gone", "silent", "cut", "failed"} {
		assert.Zero(t, sc.Value("listwatch_informer_watch_restarts_total", with("cause", cause)), cause)
	}

	// The server ends the watch, as at its timeout; the next one is cut.
	createPod(t, s, "c")
	require.Eventually(t, func() bool { return a.pods.Stats().Objects == 3 }, wait, time.Millisecond)
	s.CutNextWatchAfterEvents(1)
	s.CloseWatches()
	require.Eventually(t, func() bool {
		return exampletest.Scrape(t, a.metrics).Value("listwatch_informer_watch_restarts_total", with("cause", "timeout")) == 1
	}, wait, 5*time.Millisecond)
	require.NoError(t, s.WaitForWatches(testwait.Context(t), 1))
	createPod(t, s, "d")
	require.Eventually(t, func() bool {
		sc = exampletest.Scrape(t, a.metrics)
		// The cut is counted as the watch ends, the next watch as it
		// opens: wait for both.
		return sc.Value("listwatch_informer_watch_restarts_total", with("cause", "cut")) == 1 &&
			sc.Value("listwatch_informer_objects", pods) == 4 &&
			sc.Value("listwatch_informer_watches_total", pods) >= 3
	}, wait, 5*time.Millisecond, "%v", sc)
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_lists_total", pods), "both resumed without a relist")
	assert.GreaterOrEqual(t, sc.Value("listwatch_informer_watches_total", pods), 3.0)
	assert.GreaterOrEqual(t, sc.Value("listwatch_informer_events_total", pods), 2.0)
	assert.GreaterOrEqual(t, sc.Value("rest_client_requests_total", map[string]string{"code": "403", "method": "GET"}), 1.0,
		"the factory's client is counted too")

	// Restarted with its server gone, it serves the snapshot unconfirmed.
	a.stop()
	s.Close()
	b := startAgent(t, s.URL, dir)
	require.Eventually(t, func() bool {
		sc = exampletest.Scrape(t, b.metrics)
		return sc.Value("listwatch_informer_restored_objects", pods) == 4
	}, wait, 5*time.Millisecond, "the snapshot restored")
	assert.Zero(t, sc.Value("listwatch_informer_synced", pods))
	assert.Equal(t, 4.0, sc.Value("listwatch_informer_objects", pods))
}

// decision 41: informers outside a factory are labelled by their Name,
// each once; two of one name (never run, so not told apart) fail the
// scrape, naming it, instead of one being renamed "-2" in metrics alone.
func TestInformersOutsideAFactory(t *testing.T) {
	src := &httpwatch.ResourceClient{}
	one, two := listwatch.NewInformer(src, 0), listwatch.NewInformer(src, 0)
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Informers: []*listwatch.Informer{one, one}}))
	fams, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, f := range fams {
		if f.GetName() == "listwatch_informer_objects" {
			for _, m := range f.Metric {
				for _, l := range m.Label {
					if l.GetName() == "informer" {
						names = append(names, l.GetValue())
					}
				}
			}
		}
	}
	assert.Equal(t, []string{"objects"}, names)
	assert.Error(t, Register(reg, Sources{Informers: []*listwatch.Informer{one}}), "a second Register on one registry")

	reg = prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Informers: []*listwatch.Informer{one, two}}))
	_, err = reg.Gather()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `two informers named "objects"`)
}

// decision 36's alert metric: a watch found silent is counted under
// cause="silent", and under no other cause.
func TestScrapeCountsSilentWatchRestarts(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.BookmarkInterval = 0 // a quiet watch hears nothing
	s.Start()
	t.Cleanup(s.Close)
	clk := clock.NewFake(time.Unix(1000, 0))
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	f := listwatch.NewFactory(client)
	f.Configure = func(_ httpwatch.Resource, inf *listwatch.Informer) {
		inf.Clock = clk
		inf.Reflector.PagedList = true
	}
	pods := f.ForResource(watchtest.Pods)
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Factory: f}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	t.Cleanup(func() { cancel(); f.Shutdown() })
	require.NoError(t, f.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return pods.Stats().Watches == 1 }, wait, time.Millisecond)

	require.NoError(t, clk.WaitForWaiters(testwait.Context(t), 1), "the watch waits for the server")
	clk.Step(reflector.DefaultWatchIdleTimeout)
	restarts := func(cause string) float64 {
		return exampletest.Scrape(t, srv.URL).Value("listwatch_informer_watch_restarts_total",
			map[string]string{"resource": "pods.v1", "cause": cause})
	}
	require.Eventually(t, func() bool { return restarts("silent") == 1 }, wait, 5*time.Millisecond)
	for _, cause := range []string{"timeout", "gone", "cut", "failed"} {
		assert.Zero(t, restarts(cause), cause)
	}
}

// A handler's panic, recovered, and a snapshot that cannot be written
// (its directory is a file) are each counted for the informer.
func TestScrapeHandlerPanicsAndSaveFailures(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	createPod(t, s, "a")
	dir := t.TempDir()
	// A directory, not empty, where the snapshot file would be renamed to.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "pods.snap", "in"), 0o700))
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	inf := listwatch.NewInformer(client.Resource(watchtest.Pods), 0)
	inf.Logger = discard
	inf.Snapshot = snapshot.Options{Dir: dir, Name: "pods.snap"}
	_, err = inf.AddEventHandler(listwatch.HandlerFuncs{AddFunc: func(*listwatch.Object, bool) { panic("handler") }})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Informers: []*listwatch.Informer{inf}}))
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); inf.Run(ctx) }()
	stop := sync.OnceFunc(func() { cancel(); testwait.RecvWithin(t, ran, wait, "the informer to stop") })
	t.Cleanup(stop)

	pods := map[string]string{"resource": "pods.v1", "namespace": ""}
	require.Eventually(t, func() bool {
		return gather(t, reg).Value("listwatch_informer_handler_panics_total", pods) == 1
	}, wait, 5*time.Millisecond, "one panic: one pod added")
	stop() // saves the snapshot, or fails to
	sc := gather(t, reg)
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_handler_panics_total", pods))
	// One at the stop, and one after the first sync if it came first.
	assert.GreaterOrEqual(t, sc.Value("listwatch_snapshot_save_failures_total", pods), 1.0, "%v", sc)
}
