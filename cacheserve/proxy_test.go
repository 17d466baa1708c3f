package cacheserve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
)

// recorder is an upstream that notes what reached it.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string // "METHOD path auth=… cookie=…"
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	t.Helper()
	rec := &recorder{}
	rec.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.seen = append(rec.seen, r.Method+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization")+" cookie="+r.Header.Get("Cookie"))
		rec.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(func() {
		rec.CloseClientConnections()
		rec.Close()
	})
	return rec
}

func (rec *recorder) got() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.seen...)
}

func created(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"new"}}`)
}

// do sends one request with the given Authorization (none if "") and
// returns the status, headers and body; redirects are not followed.
func do(t *testing.T, method, url, auth string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(`{"metadata":{"name":"new"}}`))
	require.NoError(t, err)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	req.Header.Set("Cookie", "session=local")
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// nodeConfig is the node cache's own config for host, with credentials
// of its own that must never be lent.
func nodeConfig(host string) *kubeconfig.Config {
	return &kubeconfig.Config{Host: host, BearerToken: "node-secret"}
}

// TestProxyForwardsWithTheClientsToken is decision 45: what the cache
// cannot answer completely (a write, a resource not cached, a selector
// wider than the informer's, an object a selective cache lacks) goes to
// the API server with the client's own bearer token and nothing of the
// node cache's; what it can answer never leaves it; a request without a
// token of its own is refused with a 403 that says why, unsent.
func TestProxyForwardsWithTheClientsToken(t *testing.T) {
	rec := newRecorder(t, created)
	r := newRigOf(t, listwatch.Selector{Field: "spec.nodeName=node-a"})
	seed(t, r.up)
	r.caughtUp(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	r.srv.Proxy = p
	for _, c := range []struct{ method, path string }{
		{"POST", "/api/v1/namespaces/shop/pods"},
		{"DELETE", "/api/v1/namespaces/shop/pods/web-1"},
		{"GET", "/api/v1/configmaps"},
		{"GET", "/api/v1/pods?labelSelector=app"},
		{"GET", "/api/v1/namespaces/shop/pods/web-2"}, // on node-b: not in this cache
		{"GET", "/openapi/v3"},
	} {
		code, _, body := do(t, c.method, r.local.URL+c.path, "Bearer client-token")
		require.Equal(t, http.StatusCreated, code, "%s %s: %s", c.method, c.path, body)
	}
	for _, seen := range rec.got() {
		require.Contains(t, seen, " auth=Bearer client-token cookie=")
		require.True(t, strings.HasSuffix(seen, "cookie="), "a cookie is not forwarded: %s", seen)
		require.NotContains(t, seen, "node-secret")
	}
	require.Len(t, rec.got(), 6)

	// What the cache holds is answered here.
	code, _, _ := do(t, "GET", r.local.URL+"/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", "Bearer client-token")
	require.Equal(t, http.StatusOK, code)
	code, _, _ = do(t, "GET", r.local.URL+"/api/v1/namespaces/shop/pods/web-1", "")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, rec.got(), 6)

	// No token of its own (Basic is no bearer token): refused, unsent.
	for _, auth := range []string{"", "Basic dXNlcjpwYXNz"} {
		code, _, body := do(t, "POST", r.local.URL+"/api/v1/namespaces/shop/pods", auth)
		require.Equal(t, http.StatusForbidden, code, body)
		require.Contains(t, body, "serves reads only; it forwards such a request to the API server only with the client's own bearer token")
		require.NotContains(t, body, "node-secret")
	}
	require.Len(t, rec.got(), 6)
	require.Equal(t, ProxyStats{Forwarded: 6, Refused: 2}, r.srv.Stats().Proxy)
}

// TestProxyUnreachableIs503 is decision 45: while the API server cannot be
// reached, what would be forwarded is refused with a 503, Retry-After and
// a Status that says what could not be answered and why.
func TestProxyUnreachableIs503(t *testing.T) {
	r := newRig(t)
	p, err := NewProxy(nodeConfig("http://127.0.0.1:1"))
	require.NoError(t, err)
	r.srv.Proxy = p
	code, h, body := do(t, "POST", r.local.URL+"/api/v1/namespaces/shop/pods", "Bearer client-token")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Equal(t, "5", h.Get("Retry-After"))
	require.Contains(t, body, `"reason":"ServiceUnavailable"`)
	require.Contains(t, body, "serves reads only; the API server at http://127.0.0.1:1 is unreachable (")
	require.NotContains(t, body, "client-token")
	code, _, body = do(t, "GET", r.local.URL+"/api/v1/configmaps?watch=1", "Bearer client-token")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.Contains(t, body, "configmaps.v1 is not cached here; the API server")
	require.Equal(t, int64(2), r.srv.Stats().Proxy.Unreachable)
}

// TestProxyBoundsEveryRequest is decision 45: a forwarded request the API
// server does not answer in time, or a watch whose headers do not come,
// ends with a 504 rather than hanging.
func TestProxyBoundsEveryRequest(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // then the server sees the proxy leave
		<-r.Context().Done()
	})
	r := newRig(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	p.Timeout, p.WatchHeaderTimeout = 50*time.Millisecond, 50*time.Millisecond
	r.srv.Proxy = p
	for _, path := range []string{"/api/v1/configmaps", "/api/v1/configmaps?watch=true"} {
		code, _, body := do(t, "GET", r.local.URL+path, "Bearer client-token")
		require.Equal(t, http.StatusGatewayTimeout, code, body)
		require.Contains(t, body, "did not answer in time")
	}
}

// TestProxyStreamsWatches is decision 45: a forwarded watch's events
// reach the client as the API server sends them, not when it ends.
func TestProxyStreamsWatches(t *testing.T) {
	release := make(chan struct{})
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"a"}}}`+"\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"b"}}}`+"\n")
	})
	r := newRig(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	r.srv.Proxy = p
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", r.local.URL+"/api/v1/configmaps?watch=1", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer client-token")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	require.True(t, lines.Scan()) // before the API server sends the second
	require.Contains(t, lines.Text(), `"name":"a"`)
	close(release)
	require.True(t, lines.Scan())
	require.Contains(t, lines.Text(), `"name":"b"`)
}

// TestProxyTokenGoesNowhereElse is decision 45: a redirect from the API
// server is handed to the client, never followed with its token.
func TestProxyTokenGoesNowhereElse(t *testing.T) {
	elsewhere := newRecorder(t, created)
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/api/v1/configmaps", http.StatusTemporaryRedirect)
	})
	r := newRig(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	r.srv.Proxy = p
	code, h, _ := do(t, "GET", r.local.URL+"/api/v1/configmaps", "Bearer client-token")
	require.Equal(t, http.StatusTemporaryRedirect, code)
	require.Equal(t, elsewhere.URL+"/api/v1/configmaps", h.Get("Location"))
	require.Empty(t, elsewhere.got())
}

// TestProxyDiscoveryFromTheAPIServer is decision 45: with a Proxy, a
// client with a bearer token reads the API server's discovery (so that
// kubectl finds what is forwarded); without a token, or with the API
// server unreachable, the cache's own, of what it serves.
func TestProxyDiscoveryFromTheAPIServer(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[{"name":"configmaps"}]}`)
	})
	r := newRig(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	r.srv.Proxy = p
	code, _, body := do(t, "GET", r.local.URL+"/api/v1", "Bearer client-token")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, `"configmaps"`)
	require.Len(t, rec.got(), 1)
	for _, c := range []struct{ base, auth string }{{r.local.URL, ""}, {r.local.URL, "Bearer client-token"}} {
		if c.auth != "" {
			off, err := NewProxy(nodeConfig("http://127.0.0.1:1"))
			require.NoError(t, err)
			r.srv.Proxy = off
		}
		code, _, body := do(t, "GET", c.base+"/api/v1", c.auth)
		require.Equal(t, http.StatusOK, code, body)
		require.Contains(t, body, `"name":"pods"`)
		require.NotContains(t, body, `"configmaps"`)
	}
	require.Len(t, rec.got(), 1)
}

// TestProxyLongRunningIsBoundedAsAWatch is decision 45: a pod's log,
// exec, attach, port-forward or proxy runs as long as a watch may (its
// headers bounded, then MaxWatch), not cut at Timeout as a list is.
func TestProxyLongRunningIsBoundedAsAWatch(t *testing.T) {
	rec := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "a line of log\n")
	})
	r := newRig(t)
	p, err := NewProxy(nodeConfig(rec.URL))
	require.NoError(t, err)
	p.Timeout = time.Nanosecond // every request that is not long-running runs out of time
	r.srv.Proxy = p
	code, _, body := do(t, "GET", r.local.URL+"/api/v1/namespaces/shop/pods/web-1/log?follow=true", "Bearer client-token")
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, "a line of log\n", body)
	code, _, _ = do(t, "GET", r.local.URL+"/api/v1/configmaps", "Bearer client-token")
	require.Equal(t, http.StatusGatewayTimeout, code)
}

// TestProxyDiscoveryPaths is decision 45: the discovery documents (/api,
// /api/VERSION, /apis, /apis/GROUP, /apis/GROUP/VERSION) are answered by
// the cache itself when the API server is unreachable; a resource's path
// below them is forwarded, and refused with a 503 then.
func TestProxyDiscoveryPaths(t *testing.T) {
	r := newRig(t)
	off, err := NewProxy(nodeConfig("http://127.0.0.1:1"))
	require.NoError(t, err)
	r.srv.Proxy = off
	for _, tc := range []struct {
		path string
		code int
	}{
		{"/api", http.StatusOK},
		{"/api/v1", http.StatusOK},
		{"/api/v1/configmaps", http.StatusServiceUnavailable},
		{"/apis", http.StatusOK},
		{"/apis/apps", http.StatusNotFound},    // discovery of a group not served here
		{"/apis/apps/v1", http.StatusNotFound}, // likewise
		{"/apis/apps/v1/deployments", http.StatusServiceUnavailable},
	} {
		code, _, body := do(t, "GET", r.local.URL+tc.path, "Bearer client-token")
		require.Equal(t, tc.code, code, "%s: %s", tc.path, body)
	}
}
