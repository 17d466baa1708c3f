package prommetrics

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// The names dashboards and alerts read, scraped over HTTP from a running
// controller and parsed as Prometheus does: each with its labels, and each
// moving as the queue, the requests and the reconciles do.
func TestScrapeRunningController(t *testing.T) {
	c := newController(t)
	q := map[string]string{"name": "cms", "controller": "cms"}
	ctl := map[string]string{"controller": "cms"}
	result := func(r string) map[string]string { return map[string]string{"controller": "cms", "result": r} }
	lease := map[string]string{"name": "lw-test"}

	before := exampletest.Scrape(t, c.metrics)
	assert.Zero(t, before.Value("controller_runtime_reconcile_total", result("success")), "every result is there from the start, at 0")
	assert.Zero(t, before.Value("controller_runtime_reconcile_total", result("error")))
	assert.Zero(t, before.Value("controller_runtime_reconcile_total", result("requeue_after")))
	assert.Zero(t, before.Value("controller_runtime_reconcile_panics_total", ctl))
	assert.Equal(t, 2.0, before.Value("controller_runtime_max_concurrent_reconciles", ctl))

	testwait.Recv(t, c.entered, "the slow key's reconcile")
	var s exampletest.Scraped
	require.Eventually(t, func() bool {
		s = exampletest.Scrape(t, c.metrics)
		return s.Value("controller_runtime_reconcile_total", result("success")) >= 3 && // fail again, requeue again, ok
			s.Value("controller_runtime_reconcile_total", result("requeue")) == 1 && // requeue
			s.Value("controller_runtime_reconcile_total", result("requeue_after")) >= 1 && // tick
			s.Value("controller_runtime_active_workers", ctl) == 1 && // slow
			s.Value("workqueue_depth", q) == 0 &&
			s.Value("workqueue_unfinished_work_seconds", q) > 0 &&
			s.Value("leader_election_master_status", lease) == 1
	}, wait, 5*time.Millisecond, "while slow is held: %v", s)

	assert.Equal(t, 1.0, s.Value("controller_runtime_reconcile_errors_total", ctl), "fail, once")
	assert.Equal(t, 1.0, s.Value("controller_runtime_reconcile_total", result("error")))
	assert.GreaterOrEqual(t, s.Value("workqueue_adds_total", q), 5.0, "every key, and the retries")
	assert.GreaterOrEqual(t, s.Value("workqueue_retries_total", q), 2.0, "fail's and requeue's")
	assert.GreaterOrEqual(t, s.Value("workqueue_queue_duration_seconds", q), s.Value("workqueue_adds_total", q)-1,
		"every add but one taken (a key added while held waits)")
	assert.Greater(t, s.Value("workqueue_work_duration_seconds", q), 3.0)
	assert.GreaterOrEqual(t, s.Value("workqueue_longest_running_processor_seconds", q), s.Value("workqueue_unfinished_work_seconds", q)/2,
		"one worker is held: the longest is most of the total")
	assert.Greater(t, s.Value("controller_runtime_reconcile_time_seconds", ctl), 5.0)

	api := func(code, method string) map[string]string {
		return map[string]string{"code": code, "method": method, "host": c.host}
	}
	assert.GreaterOrEqual(t, s.Value("rest_client_requests_total", api("200", "GET")), 6.0, "the list, the watch and each reconcile's get")
	assert.GreaterOrEqual(t, s.Value("rest_client_requests_total", api("404", "GET")), 1.0, "fail's get of a missing configmap")
	assert.Equal(t, 1.0, s.Value("rest_client_requests_total", api("200", "PATCH")), "ok's label")
	assert.Equal(t, 1.0, s.Value("rest_client_request_duration_seconds", map[string]string{"verb": "PATCH", "host": c.host}))
	assert.GreaterOrEqual(t, s.Value("rest_client_request_duration_seconds", map[string]string{"verb": "GET", "host": c.host}), 5.0)

	c.release <- struct{}{} // not closed: slow's second reconcile must not find it open
	close(c.release)
	close(c.ticking)
	var after exampletest.Scraped
	require.Eventually(t, func() bool {
		after = exampletest.Scrape(t, c.metrics)
		return after.Value("controller_runtime_active_workers", ctl) == 0 &&
			after.Value("workqueue_work_duration_seconds", q) > s.Value("workqueue_work_duration_seconds", q) &&
			after.Value("controller_runtime_reconcile_total", result("success")) >= s.Value("controller_runtime_reconcile_total", result("success"))+2
	}, wait, 5*time.Millisecond, "once slow is released: %v", after)

	c.stop()
	require.NoError(t, c.runErr)
	stopped := exampletest.Scrape(t, c.metrics)
	assert.Zero(t, stopped.Value("leader_election_master_status", lease), "no longer leading")
	assert.Zero(t, stopped.Value("workqueue_depth", q))
	total := 0.0
	for _, r := range []string{"success", "requeue", "requeue_after", "error"} {
		total += stopped.Value("controller_runtime_reconcile_total", result(r))
	}
	assert.Equal(t, total, stopped.Value("controller_runtime_reconcile_time_seconds", ctl), "one duration per reconcile")
}
