package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/reconcile"
)

// reconcileBuckets are controller-runtime's for
// controller_runtime_reconcile_time_seconds.
var reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1,
	1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}

// runnerVecs are controller-runtime's controller metrics.
type runnerVecs struct {
	total, errors, panics *prometheus.CounterVec
	time                  *prometheus.HistogramVec
	active                *prometheus.GaugeVec
}

func newRunnerVecs() runnerVecs {
	return runnerVecs{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total", Help: "Total number of reconciliations per controller",
		}, []string{"controller", "result"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total", Help: "Total number of reconciliation errors per controller",
		}, []string{"controller"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_panics_total", Help: "Total number of reconciliation panics per controller",
		}, []string{"controller"}),
		time: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "controller_runtime_reconcile_time_seconds", Help: "Length of time per reconciliation per controller",
			Buckets: reconcileBuckets,
		}, []string{"controller"}),
		active: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "controller_runtime_active_workers", Help: "Number of currently used workers per controller",
		}, []string{"controller"}),
	}
}

func (v runnerVecs) collectors() []prometheus.Collector {
	return []prometheus.Collector{v.total, v.errors, v.panics, v.time, v.active}
}

// runnerName is the name Run will give r: its own, or its informer's.
func runnerName(r *reconcile.Runner) string {
	if r.Name == "" && r.For != nil {
		return r.For.Name()
	}
	return r.Name
}

// instrument wraps r's Observe, OnError and QueueMetrics, keeping what
// they were.
func (v runnerVecs) instrument(r *reconcile.Runner, q queueVecs) {
	name := runnerName(r)
	results := map[reconcile.Outcome]prometheus.Counter{}
	// Every result from the start, so that rate() has a zero to begin at.
	// The Outcomes are controller-runtime's results, labels and all.
	for _, o := range []reconcile.Outcome{reconcile.Success, reconcile.Requeue, reconcile.RequeueAfter, reconcile.Error} {
		results[o] = v.total.WithLabelValues(name, string(o))
	}
	errs, took := v.errors.WithLabelValues(name), v.time.WithLabelValues(name)
	panics := v.panics.WithLabelValues(name)
	active := v.active.WithLabelValues(name)
	next := r.Observe
	r.Observe = func(key string, d time.Duration, o reconcile.Outcome) {
		if c, ok := results[o]; ok {
			c.Inc()
		}
		if o == reconcile.Error {
			errs.Inc()
		}
		took.Observe(d.Seconds())
		if next != nil {
			next(key, d, o)
		}
	}
	// A panic is an Error for Observe, counted above with the other
	// failures as controller-runtime counts it; only OnError's error
	// tells it apart.
	nextErr := r.OnError
	r.OnError = func(key string, err error) {
		if reconcile.IsPanic(err) {
			panics.Inc()
		}
		if nextErr != nil {
			nextErr(key, err)
		}
	}
	r.QueueMetrics = q.forRunner(name, active, r.QueueMetrics)
}

// runners reports, on each scrape, what the runners' fields and state
// say: leadership and the number of workers.
type runners struct {
	runners []*reconcile.Runner
	names   []string
	workers []int // as Run will have them: at least one
	leader  *prometheus.Desc
	max     *prometheus.Desc
}

func newRunners(rs []*reconcile.Runner) *runners {
	c := &runners{
		runners: rs,
		leader: prometheus.NewDesc("leader_election_master_status",
			"Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "+
				"'name' is the string used to identify the lease. Please make sure to group by name.", []string{"name"}, nil),
		max: prometheus.NewDesc("controller_runtime_max_concurrent_reconciles",
			"Maximum number of concurrent reconciles per controller", []string{"controller"}, nil),
	}
	for _, r := range rs {
		c.names = append(c.names, runnerName(r))
		c.workers = append(c.workers, max(r.Workers, 1))
	}
	return c
}

func (c *runners) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.leader
	ch <- c.max
}

func (c *runners) Collect(ch chan<- prometheus.Metric) {
	for i, r := range c.runners {
		ch <- prometheus.MustNewConstMetric(c.max, prometheus.GaugeValue, float64(c.workers[i]), c.names[i])
		if r.Election != nil {
			ch <- prometheus.MustNewConstMetric(c.leader, prometheus.GaugeValue, bit(r.Leading()), r.Election.Name)
		}
	}
}

func bit(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
