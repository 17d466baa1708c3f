package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/clock"
)

// served reads a node cache's Server and Reviewer on each scrape
// (decision 45): whether what it serves may be behind the API server,
// what it forwarded, and how it authorized. Either may be nil.
type served struct {
	srv      *cacheserve.Server
	reviewer *cacheserve.Reviewer
	// since is when Register ran: the start of a staleness with nothing
	// heard from the API server since the start (a warm start offline).
	since time.Time
	d     servedDescs
}

type servedDescs struct {
	stale, lastHeard, staleFor, held, proxied *prometheus.Desc
	reviews, hits, coalesced, denied          *prometheus.Desc
}

func newServed(srv *cacheserve.Server, r *cacheserve.Reviewer) *served {
	s := &served{srv: srv, reviewer: r, d: newServedDescs()}
	s.since = s.clock().Now()
	return s
}

func newServedDescs() servedDescs {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return servedDescs{
		stale: desc("listwatch_served_stale",
			"1 while what the cache serves may be behind the API server (an informer failed to list or watch and has not heard from it since, a restored snapshot is not confirmed, or a list behind what was served is held); every response then carries a Warning (decision 45)."),
		lastHeard: desc("listwatch_served_last_heard_timestamp_seconds",
			"When a served informer last heard from the API server: an event, a list, a bookmark. 0 if none has since the start."),
		staleFor: desc("listwatch_served_stale_seconds",
			"While stale, seconds since the API server was last heard from (since the metrics were registered if it has not been); 0 while current."),
		held: desc("listwatch_served_held_relists_total",
			"Lists from the API server at a lower resourceVersion than one served, held back until it passes it (decision 45)."),
		proxied: desc("listwatch_served_proxied_requests_total",
			"Requests the cache could not answer whole, by outcome: forwarded (sent to the API server), unreachable (of those, the ones it did not answer: a 503 or 504), refused (unsent: no bearer token of the client's own).", "outcome"),
		reviews: desc("listwatch_served_reviews_total",
			"TokenReviews and SubjectAccessReviews the API server answered: the decision cache's misses."),
		hits: desc("listwatch_served_review_cache_hits_total",
			"Decisions taken from the cache, by state: fresh (within its TTL), offline (past it, the API server unreachable, younger than MaxStale).", "state"),
		coalesced: desc("listwatch_served_review_coalesced_total",
			"Requests that waited for a review another request had asked for."),
		denied: desc("listwatch_served_denied_total", "Requests the Reviewer denied, for any reason."),
	}
}

func (s *served) clock() clock.Clock {
	if s.srv == nil || s.srv.Clock == nil {
		return clock.Real
	}
	return s.srv.Clock
}

func (s *served) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{s.d.stale, s.d.lastHeard, s.d.staleFor, s.d.held, s.d.proxied,
		s.d.reviews, s.d.hits, s.d.coalesced, s.d.denied} {
		ch <- x
	}
}

func (s *served) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	if s.srv != nil {
		st := s.srv.Stats()
		gauge(s.d.stale, bit(st.Stale))
		gauge(s.d.lastHeard, seconds(st.LastHeard))
		staleFor := 0.0
		if st.Stale {
			from := st.LastHeard
			if from.IsZero() {
				from = s.since
			}
			staleFor = max(0, s.clock().Since(from).Seconds())
		}
		gauge(s.d.staleFor, staleFor)
		counter(s.d.held, st.HeldRelists)
		if s.srv.Proxy != nil {
			counter(s.d.proxied, st.Proxy.Forwarded, "forwarded")
			counter(s.d.proxied, st.Proxy.Unreachable, "unreachable")
			counter(s.d.proxied, st.Proxy.Refused, "refused")
		}
	}
	if s.reviewer != nil {
		st := s.reviewer.Stats()
		counter(s.d.reviews, st.Reviews)
		counter(s.d.hits, st.Cached, "fresh")
		counter(s.d.hits, st.Offline, "offline")
		counter(s.d.coalesced, st.Coalesced)
		counter(s.d.denied, st.Denied)
	}
}
