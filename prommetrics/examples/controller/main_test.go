//go:build !nometrics

package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Against its embedded fake API server the controller labels the five
// demo configmaps, and its /metrics carries what controller-runtime's
// dashboards read of the runner "labeller", its queue and its client,
// the cache's health and the Go runtime's; a configmap created later is
// labelled, and the series move. Its context's end stops it cleanly.
func TestDemoServesMetrics(t *testing.T) {
	r := exampletest.Start(t, run, "--metrics-addr", "127.0.0.1:0")
	m := r.WaitFor(t, `^labelling configmaps on (\S+); metrics on (\S+)$`)
	api, metrics := m[1], m[2]

	ctl := map[string]string{"controller": "labeller"}
	q := map[string]string{"name": "labeller", "controller": "labeller"}
	result := func(r string) map[string]string { return map[string]string{"controller": "labeller", "result": r} }
	patched := map[string]string{"method": "PATCH", "code": "200"}
	cms := map[string]string{"resource": "configmaps.v1"}
	var s exampletest.Scraped
	require.Eventually(t, func() bool {
		s = exampletest.Scrape(t, metrics)
		return s.Value("rest_client_requests_total", patched) == 5
	}, exampletest.Timeout, 5*time.Millisecond, "the five demo configmaps labelled:\n%v", s)
	for _, c := range []struct {
		name    string
		labels  map[string]string
		atLeast float64
	}{
		{"controller_runtime_reconcile_total", result("success"), 5},
		{"controller_runtime_reconcile_total", result("requeue"), 0},
		{"controller_runtime_reconcile_total", result("requeue_after"), 0},
		{"controller_runtime_reconcile_total", result("error"), 0},
		{"controller_runtime_reconcile_errors_total", ctl, 0},
		{"controller_runtime_reconcile_panics_total", ctl, 0},
		{"controller_runtime_reconcile_time_seconds", ctl, 5},
		{"controller_runtime_active_workers", ctl, 0},
		{"controller_runtime_max_concurrent_reconciles", ctl, 1},
		{"workqueue_adds_total", q, 5},
		{"workqueue_depth", q, 0},
		{"workqueue_queue_duration_seconds", q, 5},
		{"workqueue_work_duration_seconds", q, 5},
		{"workqueue_retries_total", q, 0},
		{"workqueue_unfinished_work_seconds", q, 0},
		{"workqueue_longest_running_processor_seconds", q, 0},
		{"rest_client_requests_total", map[string]string{"method": "GET", "code": "200"}, 1},
		{"rest_client_request_duration_seconds", map[string]string{"verb": "PATCH"}, 5},
		{"listwatch_informer_synced", cms, 1},
		{"listwatch_informer_objects", cms, 5},
		{"go_goroutines", nil, 1},
	} {
		assert.GreaterOrEqual(t, s.Value(c.name, c.labels), c.atLeast, "%s%v", c.name, c.labels)
	}

	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: api})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), exampletest.Timeout)
	defer cancel()
	_, err = client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("default").
		Create(ctx, []byte(`{"metadata":{"name":"later","namespace":"default"}}`))
	require.NoError(t, err)
	var after exampletest.Scraped
	require.Eventually(t, func() bool {
		after = exampletest.Scrape(t, metrics)
		return after.Value("rest_client_requests_total", patched) == 6 &&
			after.Value("listwatch_informer_objects", cms) == 6 &&
			after.Value("controller_runtime_reconcile_total", result("success")) > s.Value("controller_runtime_reconcile_total", result("success")) &&
			after.Value("workqueue_adds_total", q) > s.Value("workqueue_adds_total", q)
	}, exampletest.Timeout, 5*time.Millisecond, "the configmap created later labelled:\n%v", after)
	assert.Zero(t, after.Value("controller_runtime_reconcile_total", result("error")))

	require.NoError(t, r.Stop(t))
}
