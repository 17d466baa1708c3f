package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/ratelimit"
)

// queueBuckets are controller-runtime's for the workqueue durations: 10 ns
// to 1000 s by tens (client-go's stop at 10 s; the bounds below agree).
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 12)

// queueVecs are client-go's workqueue metrics, with controller-runtime's
// labels: name and controller, both the runner's name.
type queueVecs struct {
	depth, unfinished, longest *prometheus.GaugeVec
	adds, retries              *prometheus.CounterVec
	latency, work              *prometheus.HistogramVec
}

func newQueueVecs() queueVecs {
	labels := []string{"name", "controller"}
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
	}
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Subsystem: "workqueue", Name: name, Help: help}, labels)
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Subsystem: "workqueue", Name: name, Help: help, Buckets: queueBuckets}, labels)
	}
	return queueVecs{
		depth: gauge("depth", "Current depth of workqueue"),
		unfinished: gauge("unfinished_work_seconds", "How many seconds of work has been done that is in progress and "+
			"hasn't been observed by work_duration; reported at least every 10 seconds. Large values indicate stuck workers."),
		longest: gauge("longest_running_processor_seconds", "How many seconds has the longest running processor for workqueue been running."),
		adds:    counter("adds_total", "Total number of adds handled by workqueue"),
		retries: counter("retries_total", "Total number of delayed adds handled by workqueue: retries, requeues, RequeueAfter."),
		latency: histogram("queue_duration_seconds", "How long in seconds an item stays in workqueue before being requested"),
		work:    histogram("work_duration_seconds", "How long in seconds processing an item from workqueue takes."),
	}
}

func (v queueVecs) collectors() []prometheus.Collector {
	return []prometheus.Collector{v.depth, v.unfinished, v.longest, v.adds, v.retries, v.latency, v.work}
}

// queue is one runner's ratelimit.Metrics: the workqueue series of its
// name, and its active workers (a worker is active from Get to Done, as
// in controller-runtime). It hands every event on to next.
type queue struct {
	depth, unfinished, longest, active prometheus.Gauge
	adds, retries                      prometheus.Counter
	latency, work                      prometheus.Observer
	next                               ratelimit.Metrics
}

func (v queueVecs) forRunner(name string, active prometheus.Gauge, next ratelimit.Metrics) *queue {
	return &queue{
		depth: v.depth.WithLabelValues(name, name), unfinished: v.unfinished.WithLabelValues(name, name),
		longest: v.longest.WithLabelValues(name, name), active: active,
		adds: v.adds.WithLabelValues(name, name), retries: v.retries.WithLabelValues(name, name),
		latency: v.latency.WithLabelValues(name, name), work: v.work.WithLabelValues(name, name),
		next: next,
	}
}

func (q *queue) Added(name string) {
	q.depth.Inc()
	q.adds.Inc()
	if q.next != nil {
		q.next.Added(name)
	}
}

func (q *queue) Started(name string, waited time.Duration) {
	q.depth.Dec()
	q.latency.Observe(waited.Seconds())
	q.active.Inc()
	if q.next != nil {
		q.next.Started(name, waited)
	}
}

func (q *queue) Finished(name string, took time.Duration) {
	q.work.Observe(took.Seconds())
	q.active.Dec()
	if q.next != nil {
		q.next.Finished(name, took)
	}
}

func (q *queue) Retried(name string) {
	q.retries.Inc()
	if q.next != nil {
		q.next.Retried(name)
	}
}

func (q *queue) Unfinished(name string, total, longest time.Duration) {
	q.unfinished.Set(total.Seconds())
	q.longest.Set(longest.Seconds())
	if q.next != nil {
		q.next.Unfinished(name, total, longest)
	}
}
