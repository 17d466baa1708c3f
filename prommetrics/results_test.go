package prommetrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Each of controller-runtime's four results is there at 0 from the start
// and counts its own reconciles: Requeue as requeue, RequeueAfter as
// requeue_after; a panic counts as an error, in errors_total and in
// panics_total, and its key is retried until it succeeds. The program's
// own OnError still sees the panic.
func TestScrapeReconcileResults(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	names := []string{"ok", "requeue", "after", "panic"}
	for _, n := range names {
		_, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"}}`, n))
		require.NoError(t, err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)

	var mu sync.Mutex
	calls := map[string]int{}
	// Each key answers its way once, then succeeds.
	r := reconcile.New(listwatch.NewInformer(client.Resource(watchtest.ConfigMaps), 0), func(_ context.Context, key string) (reconcile.Result, error) {
		mu.Lock()
		calls[key]++
		first := calls[key] == 1
		mu.Unlock()
		_, name, _ := strings.Cut(key, "/")
		switch {
		case !first:
		case name == "requeue":
			return reconcile.Result{Requeue: true}, nil
		case name == "after":
			return reconcile.Result{RequeueAfter: 10 * time.Millisecond}, nil
		case name == "panic":
			panic("boom")
		}
		return reconcile.Result{}, nil
	})
	r.Name = "cms"
	r.Logger = slog.New(slog.DiscardHandler)
	seen := make(chan error, 10)
	r.OnError = func(_ string, err error) { seen <- err }

	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Runners: []*reconcile.Runner{r}}))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	metrics := srv.URL + "/metrics"

	ctl := map[string]string{"controller": "cms"}
	result := func(r string) map[string]string { return map[string]string{"controller": "cms", "result": r} }
	results := []string{"success", "requeue", "requeue_after", "error"}
	before := exampletest.Scrape(t, metrics)
	for _, res := range results {
		assert.Zero(t, before.Value("controller_runtime_reconcile_total", result(res)), "%s is there from the start, at 0", res)
	}
	assert.Zero(t, before.Value("controller_runtime_reconcile_errors_total", ctl))
	assert.Zero(t, before.Value("controller_runtime_reconcile_panics_total", ctl))

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	stop := sync.OnceFunc(func() { cancel(); require.NoError(t, testwait.Recv(t, done, "Run to return")) })
	t.Cleanup(stop)

	var after exampletest.Scraped
	require.Eventually(t, func() bool {
		after = exampletest.Scrape(t, metrics)
		return after.Value("controller_runtime_reconcile_total", result("success")) == float64(len(names))
	}, wait, 5*time.Millisecond, "every key to succeed once: %v", after)
	stop() // nothing more to reconcile: the counts are final
	after = exampletest.Scrape(t, metrics)
	want := map[string]float64{"success": 4, "requeue": 1, "requeue_after": 1, "error": 1}
	for _, res := range results {
		assert.Equal(t, want[res], after.Value("controller_runtime_reconcile_total", result(res)), res)
	}
	assert.Equal(t, 1.0, after.Value("controller_runtime_reconcile_errors_total", ctl), "the panic is an error")
	assert.Equal(t, 1.0, after.Value("controller_runtime_reconcile_panics_total", ctl))
	assert.Equal(t, 7.0, after.Value("controller_runtime_reconcile_time_seconds", ctl), "one duration per reconcile")
	require.Len(t, seen, 1, "the program's OnError still sees the panic")
	assert.True(t, reconcile.IsPanic(<-seen))
}
