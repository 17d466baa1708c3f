package prommetrics

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/httpwatch"
)

// requestBuckets are client-go's for rest_client_request_duration_seconds.
var requestBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// requestVecs are client-go's REST client metrics.
type requestVecs struct {
	total   *prometheus.CounterVec
	latency *prometheus.HistogramVec
}

func newRequestVecs() requestVecs {
	return requestVecs{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rest_client_requests_total",
			Help: "Number of HTTP requests, partitioned by status code, method, and host.",
		}, []string{"code", "method", "host"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "rest_client_request_duration_seconds",
			Help:    "Request latency in seconds, to the response headers, per attempt. Broken down by verb, and host.",
			Buckets: requestBuckets,
		}, []string{"verb", "host"}),
	}
}

func (v requestVecs) collectors() []prometheus.Collector {
	return []prometheus.Collector{v.total, v.latency}
}

// requests is a client's Metrics: it counts every attempt, then hands it
// to the one the client had.
type requests struct {
	requestVecs
	host string
	next func(httpwatch.RequestInfo)
}

// instrument makes c's requests counted by v, keeping what c.Metrics was.
func (v requestVecs) instrument(c *httpwatch.Client) {
	host := "none"
	if u, err := url.Parse(c.Resource(httpwatch.Resource{}).Server()); err == nil && u.Host != "" {
		host = u.Host
	}
	c.Metrics = (&requests{requestVecs: v, host: host, next: c.Metrics}).observe
}

func (m *requests) observe(info httpwatch.RequestInfo) {
	method := methodOf(info.Verb)
	code := "<error>" // client-go's word for an attempt without a response
	if info.Code != 0 {
		code = strconv.Itoa(info.Code)
	}
	m.total.WithLabelValues(code, method, m.host).Inc()
	// client-go times no watch: its stream lasts minutes by design.
	if info.Verb != "watch" {
		m.latency.WithLabelValues(method, m.host).Observe(info.Latency.Seconds())
	}
	if m.next != nil {
		m.next(info)
	}
}

// methodOf is the HTTP method of an API verb: client-go labels requests
// by method, httpwatch by the API server's verb.
func methodOf(verb string) string {
	switch verb {
	case "get", "list", "watch":
		return "GET"
	case "create":
		return "POST"
	case "update":
		return "PUT"
	case "delete", "deletecollection":
		return "DELETE"
	}
	return strings.ToUpper(verb)
}
