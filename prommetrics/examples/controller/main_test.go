//go:build !nometrics

package main

import (
	"context"
	"io"
	"log/slog"
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

// run is the program with its log written to out, for exampletest.
func run(ctx context.Context, args []string, out io.Writer) error {
	a := newApp()
	a.Logger = slog.New(slog.NewTextHandler(out, nil))
	return a.Run(ctx, args, setup)
}

// Against its embedded fake API server the controller copies the five
// demo configmaps, and its /metrics carries what controller-runtime's
// dashboards read of the runner "cm2secret", its queue and its client,
// the caches' health, the leadership and the Go runtime's; a configmap
// created later is copied, and the series move. Its context's end stops
// it cleanly.
func TestDemoServesMetrics(t *testing.T) {
	r := exampletest.Start(t, run, "--health-addr", "127.0.0.1:0")
	api := r.WaitFor(t, `msg="app: started" app=cm2secret server="(\S+) \(embedded`)[1]
	metrics := "http://" + r.WaitFor(t, `msg="app: serving probes" app=cm2secret addr=(\S+) metrics=true`)[1] + "/metrics"

	ctl := map[string]string{"controller": "cm2secret"}
	q := map[string]string{"name": "cm2secret", "controller": "cm2secret"}
	result := func(r string) map[string]string { return map[string]string{"controller": "cm2secret", "result": r} }
	applied := map[string]string{"method": "PATCH", "code": "201"} // an apply that creates
	cms := map[string]string{"resource": "configmaps.v1"}
	var s exampletest.Scraped
	require.Eventually(t, func() bool {
		s = exampletest.Scrape(t, metrics)
		return s.Value("controller_runtime_reconcile_total", result("success")) >= 5 && s.Value("rest_client_requests_total", applied) == 5
	}, exampletest.Timeout, 5*time.Millisecond, "the five demo configmaps copied:\n%v", s)
	for _, c := range []struct {
		name    string
		labels  map[string]string
		atLeast float64
	}{
		{"controller_runtime_reconcile_total", result("error"), 0},
		{"controller_runtime_reconcile_errors_total", ctl, 0},
		{"controller_runtime_reconcile_panics_total", ctl, 0},
		{"controller_runtime_reconcile_time_seconds", ctl, 5},
		{"controller_runtime_max_concurrent_reconciles", ctl, 1},
		{"workqueue_adds_total", q, 5},
		{"workqueue_depth", q, 0},
		{"workqueue_retries_total", q, 0},
		{"leader_election_master_status", map[string]string{"name": "cm2secret"}, 1},
		{"rest_client_request_duration_seconds", map[string]string{"verb": "PATCH"}, 5},
		{"listwatch_informer_synced", cms, 1},
		{"listwatch_informer_objects", cms, 5},
		{"listwatch_informer_synced", map[string]string{"resource": "secrets.v1"}, 1},
		{"go_goroutines", nil, 1},
	} {
		assert.GreaterOrEqual(t, s.Value(c.name, c.labels), c.atLeast, "%s%v", c.name, c.labels)
	}
	assert.Zero(t, s.Value("controller_runtime_reconcile_total", result("error")))

	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: api})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), exampletest.Timeout)
	defer cancel()
	_, err = client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("default").
		Create(ctx, []byte(`{"metadata":{"name":"later","namespace":"default","labels":{"app":"x"}},"data":{"a":"b"}}`))
	require.NoError(t, err)
	var after exampletest.Scraped
	require.Eventually(t, func() bool {
		after = exampletest.Scrape(t, metrics)
		return after.Value("rest_client_requests_total", applied) == 6 && after.Value("listwatch_informer_objects", cms) == 6
	}, exampletest.Timeout, 5*time.Millisecond, "the configmap created later copied:\n%v", after)
	_, err = client.Resource(httpwatch.Resource{Version: "v1", Resource: "secrets"}).Namespace("default").Get(ctx, "later-copy")
	require.NoError(t, err)
	require.NoError(t, r.Stop(t))
}
