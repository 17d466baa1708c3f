package cacheserve

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/stretchr/testify/require"
)

// reviewServer is an API server that answers TokenReviews and
// SubjectAccessReviews: alice's token is alice, who may list and watch
// pods and nothing else; any other token is refused.
type reviewServer struct {
	*httptest.Server
	tokens, accesses atomic.Int64
	nodeAuth         atomic.Value // the Authorization the reviews came with
	// gate, if set, holds every review until it is closed.
	gate atomic.Pointer[chan struct{}]
}

func newReviewServer(t *testing.T) *reviewServer {
	t.Helper()
	rs := &reviewServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.nodeAuth.Store(r.Header.Get("Authorization"))
		if g := rs.gate.Load(); g != nil {
			<-*g
		}
		var in struct {
			Spec struct {
				Token              string
				User               string
				ResourceAttributes *struct{ Verb, Resource string }
			}
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.NotFound(w, r)
			return
		}
		var status any
		switch r.URL.Path {
		case "/apis/authentication.k8s.io/v1/tokenreviews":
			rs.tokens.Add(1)
			ok := in.Spec.Token == "alice-token"
			status = map[string]any{"authenticated": ok, "user": map[string]any{"username": "alice", "groups": []string{"system:authenticated"}}}
		case "/apis/authorization.k8s.io/v1/subjectaccessreviews":
			rs.accesses.Add(1)
			a := in.Spec.ResourceAttributes
			ok := in.Spec.User == "alice" && a != nil && a.Resource == "pods" && (a.Verb == "list" || a.Verb == "watch")
			status = map[string]any{"allowed": ok, "reason": map[bool]string{true: "RBAC: allowed", false: ""}[ok]}
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": status})
	}))
	t.Cleanup(func() {
		rs.CloseClientConnections()
		rs.Close()
	})
	return rs
}

// reviewed is a rig whose server authorizes by a Reviewer of rs, on clk.
func reviewed(t *testing.T, rs *reviewServer, clk *clock.Fake) (*rig, *Reviewer) {
	t.Helper()
	r := newRig(t)
	client, err := httpwatch.NewClient(nodeConfig(rs.URL))
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	client.RetryMax = 0
	rv := &Reviewer{Client: client, Clock: clk}
	r.srv.Authorize = rv.Authorize
	return r, rv
}

func fakeClock() *clock.Fake { return clock.NewFake(time.Unix(1_800_000_000, 0)) }

// TestReviewerDeniesWithoutAToken is decision 45: without a bearer token
// (a User-Agent changes nothing) a request is a 401, and no review is
// made; a token the TokenReview refuses is a 401 too.
func TestReviewerDeniesWithoutAToken(t *testing.T) {
	rs := newReviewServer(t)
	r, _ := reviewed(t, rs, fakeClock())
	for _, auth := range []string{"", "Basic YWxpY2U6cHc="} {
		code, _, body := do(t, "GET", r.local.URL+"/api/v1/pods", auth)
		require.Equal(t, http.StatusUnauthorized, code, body)
		require.Contains(t, body, `"reason":"Unauthorized"`)
	}
	require.Zero(t, rs.tokens.Load())
	code, _, body := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer mallory-token")
	require.Equal(t, http.StatusUnauthorized, code, body)
	require.NotContains(t, body, "mallory-token")
	require.Equal(t, int64(1), rs.tokens.Load())
	require.Zero(t, rs.accesses.Load())
}

// TestReviewerAllowsAndDeniesBySAR is decision 45: a known token's
// request is served when the SubjectAccessReview allows it and a 403 in
// kube-apiserver's words when it does not; the reviews use the node
// cache's own credentials; each decision is cached for its TTL (allowed
// 5 min, denied 30 s, a token 2 min) and asked again after it.
func TestReviewerAllowsAndDeniesBySAR(t *testing.T) {
	rs := newReviewServer(t)
	clk := fakeClock()
	r, rv := reviewed(t, rs, clk)
	code, _, body := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	require.Equal(t, http.StatusOK, code, body)
	code, _, body = do(t, "GET", r.local.URL+"/api/v1/namespaces/shop/pods/web-1", "Bearer alice-token")
	require.Equal(t, http.StatusForbidden, code, body)
	require.Contains(t, body, `pods is forbidden: User \"alice\" cannot get resource \"pods\" in API group \"\" in the namespace \"shop\"`)
	code, _, _ = do(t, "GET", r.local.URL+"/version", "Bearer alice-token")
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, int64(1), rs.tokens.Load())
	require.Equal(t, int64(3), rs.accesses.Load())
	require.Equal(t, "Bearer node-secret", rs.nodeAuth.Load(), "reviews are the node cache's own requests")

	// Within their TTLs, nothing is asked again.
	clk.Step(29 * time.Second)
	do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	do(t, "GET", r.local.URL+"/version", "Bearer alice-token")
	require.Equal(t, int64(3), rs.accesses.Load())
	// Past the denied TTL, the denial is asked again; the allowed one not.
	clk.Step(2 * time.Second)
	do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	do(t, "GET", r.local.URL+"/version", "Bearer alice-token")
	require.Equal(t, int64(4), rs.accesses.Load())
	require.Equal(t, int64(1), rs.tokens.Load())
	// Past the token's TTL, the token is reviewed again.
	clk.Step(2 * time.Minute)
	do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	require.Equal(t, int64(2), rs.tokens.Load())
	st := rv.Stats()
	require.Equal(t, int64(6), st.Reviews)
	require.Equal(t, int64(4), st.Denied)
}

// TestReviewerOffline is decision 45: with the API server unreachable, a
// decision made before the outage is used past its TTL while younger
// than MaxStale; one older denies with a 503 that says why, as does a
// request never decided; a denial stays a denial.
func TestReviewerOffline(t *testing.T) {
	rs := newReviewServer(t)
	clk := fakeClock()
	r, rv := reviewed(t, rs, clk)
	code, _, _ := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	require.Equal(t, http.StatusOK, code)
	code, _, _ = do(t, "GET", r.local.URL+"/api/v1/namespaces/shop/pods/web-1", "Bearer alice-token")
	require.Equal(t, http.StatusForbidden, code)
	rs.CloseClientConnections()
	rs.Close()

	clk.Step(10 * time.Minute) // past every TTL, within DefaultMaxStale
	code, _, body := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	require.Equal(t, http.StatusOK, code, body)
	code, _, _ = do(t, "GET", r.local.URL+"/api/v1/namespaces/shop/pods/web-1", "Bearer alice-token")
	require.Equal(t, http.StatusForbidden, code)
	code, h, body := do(t, "GET", r.local.URL+"/api/v1/pods?watch=1", "Bearer alice-token")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Equal(t, "5", h.Get("Retry-After"))
	require.Contains(t, body, "cannot authorize: the API server cannot be reached")
	require.Equal(t, int64(5), rv.Stats().Offline) // the token thrice, the list's and the get's SARs

	// An expired cached decision denies.
	clk.Step(5*time.Minute + time.Second)
	code, _, body = do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.True(t, strings.Contains(body, "younger than 15m0s"), body)
}

// TestReviewerAsksOnceForConcurrentRequests is decision 45: requests that
// need the same review while it is under way wait for it: twenty clients
// with one new token make one TokenReview and one SubjectAccessReview.
func TestReviewerAsksOnceForConcurrentRequests(t *testing.T) {
	rs := newReviewServer(t)
	gate := make(chan struct{})
	rs.gate.Store(&gate)
	r, rv := reviewed(t, rs, fakeClock())
	const n = 20
	codes := make(chan int, n)
	for range n {
		go func() {
			code, _, _ := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer alice-token")
			codes <- code
		}()
	}
	require.Eventually(t, func() bool { return rv.Stats().Coalesced == n-1 }, wait, time.Millisecond)
	close(gate)
	for range n {
		require.Equal(t, http.StatusOK, <-codes)
	}
	require.Equal(t, int64(1), rs.tokens.Load())
	require.Equal(t, int64(1), rs.accesses.Load())
}

// TestReviewerRefusedIsSaidOnce is decision 45: when the API server
// refuses the node cache's reviews (its identity may not make them),
// requests are denied with a 403 that says so, and it is logged once at
// Error with the ClusterRole to grant, never with a token; the httpwatch
// client's own Debug lines carry none either.
func TestReviewerRefusedIsSaidOnce(t *testing.T) {
	refuser := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","message":"tokenreviews.authentication.k8s.io is forbidden","reason":"Forbidden","code":403}`))
	}))
	defer refuser.Close()
	r := newRig(t)
	logger, log := testlog.NewLogger()
	client, err := httpwatch.NewClient(nodeConfig(refuser.URL))
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	client.Logger = logger
	r.srv.Authorize = (&Reviewer{Client: client, Logger: logger}).Authorize
	for range 3 {
		code, _, body := do(t, "GET", r.local.URL+"/api/v1/pods", "Bearer secret-client-token")
		require.Equal(t, http.StatusForbidden, code, body)
		require.Contains(t, body, "cannot authorize: the API server refused to review the request")
		require.NotContains(t, body, "secret-client-token")
	}
	above := log.Above()
	require.Len(t, above, 1, "%q", above)
	require.Contains(t, above[0], "ERROR cacheserve: the API server refused a review")
	require.Contains(t, above[0], "system:auth-delegator")
	require.NotContains(t, log.All(), "secret-client-token")
	require.NotContains(t, log.All(), "node-secret")
}

// TestReviewerTTLsEndExactly is decision 45: a decision is used for less
// than its TTL (a denial 30 s, a token 2 min, an allowed request 5 min)
// and asked again once it is that old; offline, one younger than
// MaxStale is used and one exactly that old denies. Stats count each
// decision where it was taken.
func TestReviewerTTLsEndExactly(t *testing.T) {
	rs := newReviewServer(t)
	clk := fakeClock()
	r, rv := reviewed(t, rs, clk)
	pods, version := r.local.URL+"/api/v1/pods", r.local.URL+"/version"
	ask := func(url string, want int, tokens, accesses int64) {
		t.Helper()
		code, _, body := do(t, "GET", url, "Bearer alice-token")
		require.Equal(t, want, code, body)
		require.Equal(t, tokens, rs.tokens.Load(), "token reviews")
		require.Equal(t, accesses, rs.accesses.Load(), "access reviews")
	}
	ask(pods, http.StatusOK, 1, 1)
	ask(version, http.StatusForbidden, 1, 2)
	clk.Step(DefaultDeniedTTL) // 30 s: the denial is asked again
	ask(version, http.StatusForbidden, 1, 3)
	ask(pods, http.StatusOK, 1, 3)
	clk.Step(DefaultTokenTTL - DefaultDeniedTTL) // 2 min: the token is
	ask(pods, http.StatusOK, 2, 3)
	clk.Step(DefaultAllowedTTL - DefaultTokenTTL) // 5 min: the allowed list is
	ask(pods, http.StatusOK, 3, 4)
	require.Equal(t, ReviewerStats{Reviews: 7, Cached: 5, Denied: 2}, rv.Stats())

	rs.CloseClientConnections()
	rs.Close()
	clk.Step(DefaultMaxStale - 1)
	ask(pods, http.StatusOK, 3, 4)
	clk.Step(1)
	ask(pods, http.StatusServiceUnavailable, 3, 4)
	require.Equal(t, ReviewerStats{Reviews: 7, Cached: 5, Offline: 2, Denied: 3}, rv.Stats())
}

// TestReviewerCachesAreBounded is decision 45: each of a Reviewer's
// caches holds at most 10 000 decisions; a new one past that drops those
// too old for any use (as old as MaxStale, or AllowedTTL if longer),
// and all of them when none is.
func TestReviewerCachesAreBounded(t *testing.T) {
	clk := fakeClock()
	r := &Reviewer{Clock: clk}
	now := clk.Now()
	for _, tc := range []struct {
		name  string
		fill  int
		old   int // how many of fill are exactly DefaultMaxStale old; the others a nanosecond younger
		after int
	}{
		{"room left", maxDecisions - 1, maxDecisions - 1, maxDecisions},
		{"full, half too old", maxDecisions, maxDecisions / 2, maxDecisions/2 + 1},
		{"full, none too old", maxDecisions, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := make(map[int]decision, tc.fill)
			for i := range tc.fill {
				at := now.Add(-DefaultMaxStale + 1)
				if i < tc.old {
					at = now.Add(-DefaultMaxStale)
				}
				m[i] = decision{ok: true, at: at}
			}
			putBounded(m, -1, decision{ok: true, at: now}, r.expired)
			require.Len(t, m, tc.after)
			require.Contains(t, m, -1)
			if tc.fill == maxDecisions {
				for k := range m {
					require.True(t, k == -1 || k >= tc.old, "%d kept, too old", k)
				}
			}
		})
	}
	r.AllowedTTL = time.Hour // longer than MaxStale: an allowed decision is kept for it
	require.False(t, r.expired(decision{at: now.Add(-time.Hour + 1)}))
	require.True(t, r.expired(decision{at: now.Add(-time.Hour)}))
}
