package prommetrics

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
	"github.com/listwatch/listwatch/reconcile"
)

// gather reads reg as a scrape would, without HTTP.
func gather(t *testing.T, reg *prometheus.Registry) exampletest.Scraped {
	t.Helper()
	fams, err := reg.Gather()
	require.NoError(t, err)
	sc := exampletest.Scraped{}
	for _, f := range fams {
		sc[f.GetName()] = f
	}
	return sc
}

// Each API verb is counted under client-go's HTTP method, and a verb it
// does not know under its own name upper-cased.
func TestRequestsLabelledByMethod(t *testing.T) {
	for verb, method := range map[string]string{
		"get": "GET", "list": "GET", "watch": "GET", "create": "POST", "update": "PUT", "patch": "PATCH",
		"delete": "DELETE", "deletecollection": "DELETE", "proxy": "PROXY",
	} {
		t.Run(verb, func(t *testing.T) {
			client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://api.example:6443"})
			require.NoError(t, err)
			reg := prometheus.NewRegistry()
			require.NoError(t, Register(reg, Sources{Client: client}))
			client.Metrics(httpwatch.RequestInfo{Verb: verb, Code: 200})
			sc := gather(t, reg)
			assert.Equal(t, 1.0, sc.Value("rest_client_requests_total",
				map[string]string{"code": "200", "method": method, "host": "api.example:6443"}))
		})
	}
}

// A runner's queue events set its workqueue series as they happen:
// depth from Added to Started, active workers from Started to Finished,
// the unfinished work and the longest running one each from its own
// figure; and a runner left at 0 workers is reported with the one Run
// gives it.
func TestScrapeRunnerQueueEvents(t *testing.T) {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://api.example:6443"})
	require.NoError(t, err)
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	r := reconcile.New(inf, nil)
	r.Name = "pods"
	r.Workers = 0
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Runners: []*reconcile.Runner{r}}))
	q := map[string]string{"name": "pods", "controller": "pods"}
	ctl := map[string]string{"controller": "pods"}

	m := r.QueueMetrics
	m.Added("pods")
	m.Added("pods")
	m.Started("pods", 2*time.Second)
	m.Unfinished("pods", 3*time.Second, 2*time.Second)
	sc := gather(t, reg)
	assert.Equal(t, 1.0, sc.Value("workqueue_depth", q), "two added, one taken")
	assert.Equal(t, 1.0, sc.Value("controller_runtime_active_workers", ctl))
	assert.Equal(t, 3.0, sc.Value("workqueue_unfinished_work_seconds", q))
	assert.Equal(t, 2.0, sc.Value("workqueue_longest_running_processor_seconds", q))
	assert.Equal(t, 1.0, sc.Value("controller_runtime_max_concurrent_reconciles", ctl), "Run's one worker")

	m.Finished("pods", time.Second)
	m.Unfinished("pods", 0, 0)
	sc = gather(t, reg)
	assert.Zero(t, sc.Value("controller_runtime_active_workers", ctl))
	assert.Zero(t, sc.Value("workqueue_unfinished_work_seconds", q))
	assert.Zero(t, sc.Value("workqueue_longest_running_processor_seconds", q))
}
