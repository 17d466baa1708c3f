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

type seenRequests struct{ infos []httpwatch.RequestInfo }

func (s *seenRequests) Observe(i httpwatch.RequestInfo) { s.infos = append(s.infos, i) }

// seenQueue records every queue event, each as its method's name.
type seenQueue struct{ events []string }

func (s *seenQueue) Added(string)                   { s.events = append(s.events, "Added") }
func (s *seenQueue) Started(string, time.Duration)  { s.events = append(s.events, "Started") }
func (s *seenQueue) Finished(string, time.Duration) { s.events = append(s.events, "Finished") }
func (s *seenQueue) Retried(string)                 { s.events = append(s.events, "Retried") }
func (s *seenQueue) Unfinished(string, time.Duration, time.Duration) {
	s.events = append(s.events, "Unfinished")
}

// Register wraps the hooks a program set itself, which still see every
// event; a runner without a Name is labelled with its informer's, as Run
// names it.
func TestRegisterKeepsTheHooks(t *testing.T) {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://api.example:6443"})
	require.NoError(t, err)
	mine := &seenRequests{}
	client.Metrics = mine.Observe
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	inf.Reflector.Name = "pods"
	r := reconcile.New(inf, nil)
	var observed []reconcile.Outcome
	r.Observe = func(_ string, _ time.Duration, o reconcile.Outcome) { observed = append(observed, o) }
	var failed []error
	r.OnError = func(_ string, err error) { failed = append(failed, err) }
	queue := &seenQueue{}
	r.QueueMetrics = queue

	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Client: client, Runners: []*reconcile.Runner{r}}))
	client.Metrics(httpwatch.RequestInfo{Verb: "deletecollection", Code: 200, Latency: time.Millisecond})
	client.Metrics(httpwatch.RequestInfo{Verb: "watch", Err: assert.AnError})
	r.Observe("ns/a", time.Second, reconcile.Error)
	r.OnError("ns/a", assert.AnError)
	r.QueueMetrics.Added("pods")
	r.QueueMetrics.Started("pods", time.Second)
	r.QueueMetrics.Finished("pods", time.Second)
	r.QueueMetrics.Retried("pods")
	r.QueueMetrics.Unfinished("pods", time.Second, time.Second)

	assert.Len(t, mine.infos, 2)
	assert.Equal(t, []reconcile.Outcome{reconcile.Error}, observed)
	assert.Equal(t, []error{assert.AnError}, failed)
	assert.Equal(t, []string{"Added", "Started", "Finished", "Retried", "Unfinished"}, queue.events)
	fams, err := reg.Gather()
	require.NoError(t, err)
	sc := exampletest.Scraped{}
	for _, f := range fams {
		sc[f.GetName()] = f
	}
	host := "api.example:6443"
	assert.Equal(t, 1.0, sc.Value("rest_client_requests_total", map[string]string{"code": "200", "method": "DELETE", "host": host}))
	assert.Equal(t, 1.0, sc.Value("rest_client_requests_total", map[string]string{"code": "<error>", "method": "GET", "host": host}))
	assert.Len(t, sc["rest_client_request_duration_seconds"].GetMetric(), 1, "the watch is not timed")
	assert.Equal(t, 1.0, sc.Value("rest_client_request_duration_seconds", map[string]string{"verb": "DELETE", "host": host}))
	assert.Equal(t, 1.0, sc.Value("controller_runtime_reconcile_errors_total", map[string]string{"controller": "pods"}))
	assert.Zero(t, sc.Value("controller_runtime_reconcile_panics_total", map[string]string{"controller": "pods"}), "an error is no panic")
	assert.Zero(t, sc.Value("workqueue_depth", map[string]string{"name": "pods", "controller": "pods"}), "added, then started")
}
