package prommetrics

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reconcile"
)

// Sources are the parts of a program whose metrics Register exports. Each
// part reaches the parts it holds: a runner its Factory (or For and
// Watches' informers) and a factory its Client, so a controller names
// just its runner.
type Sources struct {
	// Client's requests are counted in rest_client_*.
	Client *httpwatch.Client
	// Factory's informers, those it holds at each scrape, are reported
	// in listwatch_informer_* and listwatch_snapshot_*.
	Factory *listwatch.Factory
	// Informers made without a factory are reported under their Name
	// (decision 41); two of one name make the scrape fail, naming it.
	Informers []*listwatch.Informer
	// Runners' queues, reconciles and leadership are reported in
	// workqueue_*, controller_runtime_* and leader_election_*.
	Runners []*reconcile.Runner
	// Served, a node cache's server, is reported in listwatch_served_*:
	// whether what it serves may be stale, and what it forwarded
	// (decision 45); the informers it serves, those it holds at each
	// scrape, as any other.
	Served *cacheserve.Server
	// Reviewer, the Authorizer of Served, is reported in
	// listwatch_served_review*_total and listwatch_served_denied_total.
	Reviewer *cacheserve.Reviewer
}

// Register registers on reg the metrics of every part s reaches, and
// hooks the parts that report by events: it wraps each client's Metrics
// and each runner's Observe, OnError and QueueMetrics, keeping what they
// were set to, so call it before Run and before the first request. Informers are
// read on each scrape. Call it once per registry, with every part: a
// second call's series would collide with the first's and fail.
func Register(reg prometheus.Registerer, s Sources) error {
	p := s.reach()
	var cs []prometheus.Collector
	var hooks []func()
	if len(p.clients) > 0 {
		v := newRequestVecs()
		cs = append(cs, v.collectors()...)
		for _, c := range p.clients {
			hooks = append(hooks, func() { v.instrument(c) })
		}
	}
	if len(p.runners) > 0 {
		q, rv := newQueueVecs(), newRunnerVecs()
		cs = append(cs, q.collectors()...)
		cs = append(cs, rv.collectors()...)
		cs = append(cs, newRunners(p.runners))
		for _, r := range p.runners {
			hooks = append(hooks, func() { rv.instrument(r, q) })
		}
	}
	if len(p.factories)+len(p.informers) > 0 || s.Served != nil {
		cs = append(cs, &informers{factories: p.factories, fixed: p.informers, served: s.Served, d: newInformerDescs()})
	}
	if s.Served != nil || s.Reviewer != nil {
		cs = append(cs, newServed(s.Served, s.Reviewer))
	}
	for i, c := range cs {
		if err := reg.Register(c); err != nil {
			for _, done := range cs[:i] {
				reg.Unregister(done)
			}
			return fmt.Errorf("prommetrics: register: %w", err)
		}
	}
	for _, hook := range hooks {
		hook()
	}
	return nil
}

// parts are what Sources reach, each once.
type parts struct {
	clients   []*httpwatch.Client
	factories []*listwatch.Factory
	informers []*listwatch.Informer
	runners   []*reconcile.Runner
}

func (s Sources) reach() parts {
	var p parts
	client := func(c *httpwatch.Client) { p.clients = appendNew(p.clients, c) }
	factory := func(f *listwatch.Factory) {
		if f != nil {
			p.factories = appendNew(p.factories, f)
			client(f.Client)
		}
	}
	client(s.Client)
	factory(s.Factory)
	for _, inf := range s.Informers {
		p.informers = appendNew(p.informers, inf)
	}
	for _, r := range s.Runners {
		if r == nil {
			continue
		}
		p.runners = appendNew(p.runners, r)
		if r.Factory != nil {
			factory(r.Factory)
			continue
		}
		p.informers = appendNew(p.informers, r.For)
		for _, w := range r.Watches {
			p.informers = appendNew(p.informers, w.Informer)
		}
	}
	return p
}

// appendNew appends x unless it is nil or in xs already.
func appendNew[T comparable](xs []T, x T) []T {
	var zero T
	for _, y := range xs {
		if y == x {
			return xs
		}
	}
	if x == zero {
		return xs
	}
	return append(xs, x)
}
