package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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

// Against its embedded fake API server the agent caches the three pods of
// node-1 and saves a snapshot of them, and its /metrics says so for the
// cache pods.v1; a pod created later on node-1 is counted, one on node-2
// is not. Its context's end stops it cleanly.
func TestDemoServesMetrics(t *testing.T) {
	dir := t.TempDir()
	r := exampletest.Start(t, run, "--health-addr", "127.0.0.1:0", "--snapshot-dir", dir, "--every", "1h")
	api := r.WaitFor(t, `msg="app: started" app=agent server="(\S+) \(embedded`)[1]
	metrics := "http://" + r.WaitFor(t, `msg="app: serving probes" app=agent addr=(\S+) metrics=true`)[1] + "/metrics"
	r.WaitFor(t, `msg=pods node=node-1 count=3 `)

	pods := map[string]string{"resource": "pods.v1", "namespace": ""}
	with := func(k, v string) map[string]string { return map[string]string{"resource": "pods.v1", k: v} }
	var s exampletest.Scraped
	require.Eventually(t, func() bool {
		s = exampletest.Scrape(t, metrics)
		return s.Value("listwatch_snapshot_last_save_timestamp_seconds", pods) > 0
	}, exampletest.Timeout, 5*time.Millisecond, "the snapshot saved after the first sync:\n%v", s)
	// Named after the informer's identity: a node's pods (decision 41).
	files, err := filepath.Glob(filepath.Join(dir, "pods.v1_*.snap"))
	require.NoError(t, err)
	require.Len(t, files, 1, "the snapshot in --snapshot-dir")
	fi, err := os.Stat(files[0])
	require.NoError(t, err)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64 // -1: present, any value
	}{
		{"listwatch_informer_synced", pods, 1},
		{"listwatch_informer_restored_objects", pods, 0},
		{"listwatch_informer_objects", pods, 3},
		{"listwatch_informer_queued", pods, -1},
		{"listwatch_informer_lists_total", pods, 1},
		{"listwatch_informer_watches_total", pods, -1},
		{"listwatch_informer_events_total", pods, -1},
		{"listwatch_informer_sync_errors_total", with("kind", "permanent"), 0},
		{"listwatch_informer_watch_restarts_total", with("cause", "timeout"), 0},
		{"listwatch_informer_handler_panics_total", pods, 0},
		{"listwatch_snapshot_bytes", pods, float64(fi.Size())},
		{"listwatch_snapshot_save_failures_total", pods, 0},
	} {
		if c.want == -1 {
			assert.GreaterOrEqual(t, s.Value(c.name, c.labels), 0.0, "%s%v is there", c.name, c.labels)
			continue
		}
		assert.Equal(t, c.want, s.Value(c.name, c.labels), "%s%v", c.name, c.labels)
	}
	assert.Greater(t, s.Value("listwatch_informer_bytes", pods), 0.0)
	assert.Greater(t, s.Value("listwatch_informer_last_sync_timestamp_seconds", pods), 0.0)
	assert.GreaterOrEqual(t, s.Value("rest_client_requests_total", map[string]string{"method": "GET", "code": "200"}), 1.0,
		"the factory's client")

	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: api})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), exampletest.Timeout)
	defer cancel()
	rc := client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}).Namespace("default")
	// node-2's first: once node-1's has arrived, node-2's would have too.
	for _, pod := range []string{
		`{"metadata":{"name":"later-2","namespace":"default"},"spec":{"nodeName":"node-2"}}`,
		`{"metadata":{"name":"later-1","namespace":"default"},"spec":{"nodeName":"node-1"}}`,
	} {
		_, err := rc.Create(ctx, []byte(pod))
		require.NoError(t, err)
	}
	var after exampletest.Scraped
	require.Eventually(t, func() bool {
		after = exampletest.Scrape(t, metrics)
		return after.Value("listwatch_informer_objects", pods) >= 4 &&
			after.Value("listwatch_informer_events_total", pods) > s.Value("listwatch_informer_events_total", pods)
	}, exampletest.Timeout, 5*time.Millisecond, "the pod created later on node-1 cached:\n%v", after)
	assert.Equal(t, 4.0, after.Value("listwatch_informer_objects", pods), "node-2's pod is not cached")

	require.NoError(t, r.Stop(t))
}
