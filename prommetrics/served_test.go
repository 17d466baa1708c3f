package prommetrics

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics/internal/exampletest"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// reviews answers TokenReviews (the token "good" is alice's) and
// SubjectAccessReviews (alice may do anything), as an API server would.
func reviews(t *testing.T) *httptest.Server {
	s := httptest.NewServer(reviewer())
	t.Cleanup(s.Close)
	return s
}

func reviewer() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Spec struct{ Token, User string } }
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.NotFound(w, r)
			return
		}
		var status map[string]any
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			status = map[string]any{"authenticated": in.Spec.Token == "good", "user": map[string]any{"username": "alice"}}
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			status = map[string]any{"allowed": in.Spec.User == "alice"}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": status})
	})
}

var discard = slog.New(slog.DiscardHandler)

func newClient(t *testing.T, host string) *httpwatch.Client {
	t.Helper()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: host, QPS: -1})
	require.NoError(t, err)
	c.RetryMax = 0 // an upstream gone fails at once
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// request sends method path to srv, with the bearer token if not "".
func request(t *testing.T, srv *cacheserve.Server, method, path, token string) int {
	t.Helper()
	var body *strings.Reader
	if method == http.MethodPost {
		body = strings.NewReader(`{"metadata":{"name":"new","namespace":"ns"}}`)
	} else {
		body = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec.Code
}

// Decision 45's metrics, scraped over HTTP: a node cache current, then
// cut off from its API server (stale, and for how long), what it
// forwarded and could not, and its Reviewer's reviews, cache hits fresh
// and offline, and denials.
func TestScrapeServedCache(t *testing.T) {
	up := watchtest.NewServer()
	t.Cleanup(up.Close)
	createPod(t, up, "a")
	rs := reviews(t)
	clk := clock.NewFake(time.Unix(1000, 0))
	src := newClient(t, up.URL).Resource(watchtest.Pods)
	inf := listwatch.NewInformer(src, 0)
	inf.Logger = discard
	proxy, err := cacheserve.NewProxy(&kubeconfig.Config{Host: up.URL})
	require.NoError(t, err)
	rev := &cacheserve.Reviewer{Client: newClient(t, rs.URL), Clock: clk}
	srv := &cacheserve.Server{Authorize: rev.Authorize, Clock: clk, Proxy: proxy}
	_, err = srv.Add(inf, src, apiserve.APIResource{})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Served: srv, Reviewer: rev}))
	ms := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ms.Close)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); inf.Run(ctx) }()
	t.Cleanup(func() { cancel(); testwait.RecvWithin(t, ran, wait, "the informer to stop") })
	require.NoError(t, inf.Wait(testwait.Context(t)))
	none := map[string]string{}
	outcome := func(v string) map[string]string { return map[string]string{"outcome": v} }
	state := func(v string) map[string]string { return map[string]string{"state": v} }

	require.Equal(t, http.StatusOK, request(t, srv, http.MethodGet, "/api/v1/pods", "good")) // two reviews
	require.Equal(t, http.StatusOK, request(t, srv, http.MethodGet, "/api/v1/pods", "good")) // two hits
	// Reviewed as a create (the token's review a hit), then forwarded.
	require.Equal(t, http.StatusCreated, request(t, srv, http.MethodPost, "/api/v1/namespaces/ns/pods", "good"))
	require.Equal(t, http.StatusUnauthorized, request(t, srv, http.MethodGet, "/api/v1/pods", ""))
	sc := exampletest.Scrape(t, ms.URL)
	assert.Zero(t, sc.Value("listwatch_served_stale", none))
	assert.Equal(t, 1000.0, sc.Value("listwatch_served_last_heard_timestamp_seconds", none))
	assert.Zero(t, sc.Value("listwatch_served_stale_seconds", none))
	assert.Zero(t, sc.Value("listwatch_served_held_relists_total", none))
	assert.Equal(t, 1.0, sc.Value("listwatch_served_proxied_requests_total", outcome("forwarded")))
	assert.Zero(t, sc.Value("listwatch_served_proxied_requests_total", outcome("unreachable")))
	assert.Zero(t, sc.Value("listwatch_served_proxied_requests_total", outcome("refused")))
	assert.Equal(t, 3.0, sc.Value("listwatch_served_reviews_total", none))
	assert.Equal(t, 3.0, sc.Value("listwatch_served_review_cache_hits_total", state("fresh")))
	assert.Zero(t, sc.Value("listwatch_served_review_cache_hits_total", state("offline")))
	assert.Zero(t, sc.Value("listwatch_served_review_coalesced_total", none))
	assert.Equal(t, 1.0, sc.Value("listwatch_served_denied_total", none))
	// The informer it serves is reported without being named in
	// Informers: synced, and soon holding the pod created through it.
	named := map[string]string{"informer": inf.Name()}
	assert.Equal(t, 1.0, sc.Value("listwatch_informer_synced", named))
	require.Eventually(t, func() bool {
		return exampletest.Scrape(t, ms.URL).Value("listwatch_informer_objects", named) == 2
	}, wait, 5*time.Millisecond, "the served informer's objects")

	// The API server goes: the informer fails to watch, the cache is
	// stale; 6 minutes later (past every review's TTL) the reviews come
	// from the cache, offline, and a write cannot be forwarded.
	up.Close()
	rs.Close()
	require.Eventually(t, func() bool {
		sc = exampletest.Scrape(t, ms.URL)
		return sc.Value("listwatch_served_stale", none) == 1
	}, wait, 5*time.Millisecond, "the cache did not turn stale")
	clk.Step(6 * time.Minute)
	require.Equal(t, http.StatusOK, request(t, srv, http.MethodGet, "/api/v1/pods", "good"))
	require.Equal(t, http.StatusServiceUnavailable, request(t, srv, http.MethodPost, "/api/v1/namespaces/ns/pods", "good"))
	sc = exampletest.Scrape(t, ms.URL)
	assert.Equal(t, 1.0, sc.Value("listwatch_served_stale", none))
	assert.Equal(t, 1000.0, sc.Value("listwatch_served_last_heard_timestamp_seconds", none))
	assert.Equal(t, 360.0, sc.Value("listwatch_served_stale_seconds", none))
	assert.Equal(t, 2.0, sc.Value("listwatch_served_proxied_requests_total", outcome("forwarded")))
	assert.Equal(t, 1.0, sc.Value("listwatch_served_proxied_requests_total", outcome("unreachable")))
	assert.Equal(t, 3.0, sc.Value("listwatch_served_reviews_total", none))
	assert.Equal(t, 4.0, sc.Value("listwatch_served_review_cache_hits_total", state("offline")), "two requests, a token's and a request's review each")
}

// Decision 45: a node cache warm-started with its API server down serves
// its snapshot stale, having heard nothing since it started: the stale
// seconds count from Register, on the Server's clock, never below 0, and
// the last heard is 0.
func TestScrapeServedWarmStartOffline(t *testing.T) {
	up := watchtest.NewServer()
	t.Cleanup(up.Close)
	createPod(t, up, "a")
	dir := t.TempDir()
	run := func(srv *cacheserve.Server) (*listwatch.Informer, func()) {
		src := newClient(t, up.URL).Resource(watchtest.Pods)
		inf := listwatch.NewInformer(src, 0)
		inf.Logger = discard
		inf.Snapshot = snapshot.Options{Dir: dir}
		_, err := srv.Add(inf, src, apiserve.APIResource{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		ran := make(chan struct{})
		go func() { defer close(ran); inf.Run(ctx) }()
		stop := sync.OnceFunc(func() { cancel(); testwait.RecvWithin(t, ran, wait, "the informer to stop") })
		t.Cleanup(stop)
		return inf, stop
	}
	allow := func(*http.Request) error { return nil }
	inf, stop := run(&cacheserve.Server{Authorize: allow})
	require.NoError(t, inf.Wait(testwait.Context(t)))
	stop() // saves the snapshot
	up.Close()

	clk := clock.NewFake(time.Unix(1000, 0))
	srv := &cacheserve.Server{Authorize: allow, Clock: clk}
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Served: srv}))
	ms := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ms.Close)
	run(srv)
	require.Eventually(t, func() bool { return request(t, srv, http.MethodGet, "/api/v1/pods", "") == http.StatusOK },
		wait, time.Millisecond, "the restored snapshot was not served")
	clk.Step(30 * time.Second)
	sc := exampletest.Scrape(t, ms.URL)
	none := map[string]string{}
	assert.Equal(t, 1.0, sc.Value("listwatch_served_stale", none))
	assert.Zero(t, sc.Value("listwatch_served_last_heard_timestamp_seconds", none))
	assert.Equal(t, 30.0, sc.Value("listwatch_served_stale_seconds", none))
	assert.Equal(t, -1.0, sc.Value("listwatch_served_proxied_requests_total", map[string]string{"outcome": "forwarded"}), "no Proxy, no series")
	assert.Equal(t, -1.0, sc.Value("listwatch_served_reviews_total", none), "no Reviewer, no series")

	// A clock set back before Register's time (a wall clock stepped
	// back) makes no negative count.
	clk.Set(time.Unix(990, 0))
	assert.Zero(t, exampletest.Scrape(t, ms.URL).Value("listwatch_served_stale_seconds", none))
}

// scrapeServed registers srv and r and serves their metrics.
func scrapeServed(t *testing.T, srv *cacheserve.Server, r *cacheserve.Reviewer) string {
	t.Helper()
	reg := prometheus.NewRegistry()
	require.NoError(t, Register(reg, Sources{Served: srv, Reviewer: r}))
	ms := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(ms.Close)
	return ms.URL
}

// Decision 45: a cache that is current has no stale seconds however long
// it has heard nothing (here: it serves no informer, so nothing can fail),
// and a write it cannot forward for want of the client's own bearer
// token is counted as refused, not as forwarded or unreachable.
func TestScrapeServedCurrentAndRefused(t *testing.T) {
	proxy, err := cacheserve.NewProxy(&kubeconfig.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	clk := clock.NewFake(time.Unix(1000, 0))
	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }, Clock: clk, Proxy: proxy}
	url := scrapeServed(t, srv, nil)
	clk.Step(30 * time.Second)
	require.Equal(t, http.StatusForbidden, request(t, srv, http.MethodPost, "/api/v1/namespaces/ns/pods", ""))

	sc := exampletest.Scrape(t, url)
	none := map[string]string{}
	outcome := func(v string) map[string]string { return map[string]string{"outcome": v} }
	assert.Zero(t, sc.Value("listwatch_served_stale", none))
	assert.Zero(t, sc.Value("listwatch_served_last_heard_timestamp_seconds", none))
	assert.Zero(t, sc.Value("listwatch_served_stale_seconds", none), "current: not the 30 s since Register")
	assert.Zero(t, sc.Value("listwatch_served_held_relists_total", none))
	assert.Equal(t, 1.0, sc.Value("listwatch_served_proxied_requests_total", outcome("refused")))
	assert.Zero(t, sc.Value("listwatch_served_proxied_requests_total", outcome("forwarded")))
	assert.Zero(t, sc.Value("listwatch_served_proxied_requests_total", outcome("unreachable")))
}

// Decision 45: a list from the API server below the resourceVersion the
// cache served is held back, counted, and makes the cache stale. The
// informer never runs: the test hands its Mirror (the cache's guard) the
// lists, as a reflector would.
func TestScrapeServedHeldRelist(t *testing.T) {
	src := newClient(t, "http://127.0.0.1:1").Resource(watchtest.Pods)
	inf := listwatch.NewInformer(src, 0)
	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }}
	_, err := srv.Add(inf, src, apiserve.APIResource{})
	require.NoError(t, err)
	url := scrapeServed(t, srv, nil)
	pod := func(rv string) *raw.Object {
		o, err := raw.NewObject([]byte(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"` + rv + `"}}`))
		require.NoError(t, err)
		return o
	}
	require.NoError(t, inf.Mirror.Replace([]*raw.Object{pod("10")}, "10"))
	require.NoError(t, inf.Mirror.Replace([]*raw.Object{pod("3")}, "5")) // behind

	sc := exampletest.Scrape(t, url)
	none := map[string]string{}
	assert.Equal(t, 1.0, sc.Value("listwatch_served_held_relists_total", none))
	assert.Equal(t, 1.0, sc.Value("listwatch_served_stale", none))
}

// Requests that need the review another request is waiting for wait for
// it too, and are counted as coalesced: the second of two requests with
// one token, while the API server has not answered the first's review.
func TestScrapeServedCoalescedReviews(t *testing.T) {
	asked := make(chan struct{}, 4) // the token's review, then up to two SubjectAccessReviews
	answer := make(chan struct{})
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked <- struct{}{}
		select {
		case <-answer:
		case <-r.Context().Done():
		}
		reviewer().ServeHTTP(w, r)
	}))
	t.Cleanup(rs.Close)
	release := sync.OnceFunc(func() { close(answer) })
	t.Cleanup(release) // before rs.Close, which waits for the handlers
	rev := &cacheserve.Reviewer{Client: newClient(t, rs.URL)}
	srv := &cacheserve.Server{Authorize: rev.Authorize}
	url := scrapeServed(t, srv, rev)
	none := map[string]string{}

	codes := make(chan int, 2)
	for range 2 {
		go func() { codes <- request(t, srv, http.MethodGet, "/api/v1/pods", "good") }()
	}
	testwait.RecvWithin(t, asked, wait, "the token's review")
	require.Eventually(t, func() bool {
		return exampletest.Scrape(t, url).Value("listwatch_served_review_coalesced_total", none) == 1
	}, wait, 5*time.Millisecond, "the second request did not wait for the first's review")
	release()
	for range 2 {
		// Authorized, then refused: the cache serves no pods (and has no
		// Proxy to forward to).
		assert.Equal(t, http.StatusBadRequest, testwait.RecvWithin(t, codes, wait, "a request to be answered"))
	}
	assert.Zero(t, exampletest.Scrape(t, url).Value("listwatch_served_denied_total", none))
}
