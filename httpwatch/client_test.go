package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

func TestResourcePaths(t *testing.T) {
	for _, tc := range []struct {
		res  Resource
		want string
	}{
		{Resource{Version: "v1", Resource: "pods", Namespace: "default"}, "/api/v1/namespaces/default/pods"},
		{Resource{Version: "v1", Resource: "pods"}, "/api/v1/pods"},
		{Resource{Version: "v1", Resource: "namespaces"}, "/api/v1/namespaces"},
		{Resource{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "kube-system"}, "/apis/apps/v1/namespaces/kube-system/deployments"},
		{Resource{Group: "example.com", Version: "v1", Resource: "widgets"}, "/apis/example.com/v1/widgets"},
		{Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}, "/apis/rbac.authorization.k8s.io/v1/clusterroles"},
	} {
		got, err := tc.res.Path()
		require.NoError(t, err)
		require.Equal(t, tc.want, got)
	}
	for _, bad := range []Resource{
		{Resource: "pods"},
		{Version: "v1"},
		{Version: "v1", Resource: "pods", Namespace: "a/b"},
		{Group: "..", Version: "v1", Resource: "pods"},
	} {
		_, err := bad.Path()
		require.Error(t, err, "%+v", bad)
	}
}

// A Host with a path (an API server behind a proxy) keeps its prefix.
func TestHostPathPrefix(t *testing.T) {
	srv := serveFixture(t, "pod-list.json")
	_, err := newTestClient(t, srv.URL+"/k8s/clusters/c1").Resource(pods).ListPage(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "/k8s/clusters/c1/api/v1/namespaces/fixtures/pods", srv.Requests()[0].URL.Path)
}

func TestNewClientRejectsBadHosts(t *testing.T) {
	for _, h := range []string{"", "127.0.0.1:6443", "ftp://x", "https://"} {
		_, err := NewClient(&kubeconfig.Config{Host: h})
		require.Error(t, err, h)
	}
	_, err := NewClient(nil)
	require.Error(t, err)
}

func TestListOptionsQueryRoundTrip(t *testing.T) {
	opts := ListOptions{
		LabelSelector: "app=web,tier!=db", FieldSelector: "spec.nodeName=n1", Limit: 500,
		Continue: "abc=", ResourceVersion: "42", ResourceVersionMatch: "NotOlderThan",
		TimeoutSeconds: 300, AllowWatchBookmarks: true, SendInitialEvents: true,
	}
	q := opts.Values(true)
	require.Equal(t, "allowWatchBookmarks=true&continue=abc%3D&fieldSelector=spec.nodeName%3Dn1&labelSelector=app%3Dweb%2Ctier%21%3Ddb&limit=500&resourceVersion=42&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=1", q.Encode())
	got, watch, err := ParseListOptions(q)
	require.NoError(t, err)
	require.True(t, watch)
	require.Equal(t, opts, got)

	require.Empty(t, ListOptions{}.Values(false))
	got, watch, err = ParseListOptions(url.Values{})
	require.NoError(t, err)
	require.False(t, watch)
	require.Equal(t, ListOptions{}, got)
}

// Query parameters read as the API server reads them.
func TestParseListOptionsSpellings(t *testing.T) {
	for v, want := range map[string]bool{"1": true, "true": true, "yes": true, "True": true, "": true, "on": true,
		"0": false, "false": false, "no": false, "F": false, "n": false, "off": false} {
		_, watch, err := ParseListOptions(url.Values{"watch": {v}})
		require.NoError(t, err, v)
		require.Equal(t, want, watch, v)
	}
	got, _, err := ParseListOptions(url.Values{"limit": {"-1"}})
	require.NoError(t, err)
	require.EqualValues(t, -1, got.Limit, "a negative limit is no limit to the server, not an error")
	for _, bad := range []url.Values{{"limit": {"x"}}, {"timeoutSeconds": {"1.5"}}} {
		_, _, err := ParseListOptions(bad)
		require.ErrorContains(t, err, "must be an integer", bad)
	}
}

// The request the client sends for a list, a watch and a get, in both
// modes.
func TestRequestsSent(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Query().Get("watch") != "":
			io.WriteString(w, podFrame)
		case strings.HasSuffix(r.URL.Path, "/pods"):
			w.Write(fixtures.Load(t, "pod-list.json").Body)
		default:
			io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}`)
		}
	})
	c := newTestClient(t, srv.URL)
	for _, meta := range []bool{false, true} {
		rc := c.Resource(pods)
		rc.MetadataOnly = meta
		ctx := context.Background()
		_, err := rc.ListPage(ctx, ListOptions{LabelSelector: "a=b", Limit: 2})
		require.NoError(t, err)
		w, err := rc.Watch(ctx, ListOptions{ResourceVersion: "7", AllowWatchBookmarks: true, TimeoutSeconds: 60})
		require.NoError(t, err)
		w.Stop()
		_, err = rc.Get(ctx, "a")
		require.NoError(t, err)
	}
	seen := srv.Requests()
	require.Len(t, seen, 6)
	want := []struct{ query, accept string }{
		{"labelSelector=a%3Db&limit=2", "application/json"},
		{"allowWatchBookmarks=true&resourceVersion=7&timeoutSeconds=60&watch=1", "application/json"},
		{"", "application/json"},
		{"labelSelector=a%3Db&limit=2", "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"},
		{"allowWatchBookmarks=true&resourceVersion=7&timeoutSeconds=60&watch=1", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"},
		{"", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"},
	}
	for i, r := range seen {
		require.Equal(t, want[i].query, r.URL.RawQuery, i)
		require.Equal(t, want[i].accept, r.Header.Get("Accept"), i)
		require.Equal(t, http.MethodGet, r.Method)
	}
	require.Equal(t, "/api/v1/namespaces/fixtures/pods/a", seen[2].URL.Path)
}

func TestWatchHasNoClientTimeout(t *testing.T) {
	c, err := NewClient(&kubeconfig.Config{Host: "http://127.0.0.1:1", Timeout: 3 * time.Second})
	require.NoError(t, err)
	require.Zero(t, c.watch.Timeout, "timeoutSeconds and the context bound a watch")
	require.Equal(t, 3*time.Second, c.list.Timeout)
}

func TestRateLimiterFromConfig(t *testing.T) {
	c, err := NewClient(&kubeconfig.Config{Host: "http://x", QPS: 7, Burst: 3})
	require.NoError(t, err)
	require.EqualValues(t, 7, c.limiter.Limit())
	require.Equal(t, 3, c.limiter.Burst())
	c, err = NewClient(&kubeconfig.Config{Host: "http://x"})
	require.NoError(t, err)
	require.EqualValues(t, kubeconfig.DefaultQPS, c.limiter.Limit())
	require.Equal(t, kubeconfig.DefaultBurst, c.limiter.Burst())
	c, err = NewClient(&kubeconfig.Config{Host: "http://x", QPS: -1})
	require.NoError(t, err)
	require.Nil(t, c.limiter)
}

// A cancelled context ends a wait for the rate limiter.
func TestRateLimiterHonoursContext(t *testing.T) {
	srv := serveFixture(t, "pod-list.json")
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: 0.001, Burst: 1})
	require.NoError(t, err)
	rc := c.Resource(pods)
	_, err = rc.ListPage(context.Background(), ListOptions{}) // uses the burst
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = rc.ListPage(ctx, ListOptions{})
	require.ErrorIs(t, err, context.Canceled)
}

// decision 34: the pages of one ListAll after the first are not charged to
// the rate limiter, but the first page of every list is, and so is a page
// asked for on its own, continue token or not. With one token a second and
// a context ending sooner than the next token, a charged request never
// leaves the client.
func TestListPagesAfterTheFirstAreNotRateLimited(t *testing.T) {
	const pages = 5
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("continue"))
		next := ""
		if n+1 < pages {
			next = strconv.Itoa(n + 1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":%q},"items":[{"metadata":{"name":"p%d","namespace":"ns"}}]}`, next, n)
	})
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: 1, Burst: 1})
	require.NoError(t, err)
	rc := c.Resource(pods)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	all, err := rc.List(ctx, ListOptions{})
	require.NoError(t, err, "one token pays for the whole list")
	require.Len(t, all.Items, pages)
	require.Len(t, srv.Requests(), pages)

	_, err = rc.List(ctx, ListOptions{})
	require.ErrorIs(t, err, context.DeadlineExceeded, "the next list pays again")
	_, err = rc.ListPage(ctx, ListOptions{Continue: "1"})
	require.ErrorIs(t, err, context.DeadlineExceeded, "a page asked for on its own pays")
	require.Len(t, srv.Requests(), pages, "neither reached the server")
}

// statusSequence answers with the given statuses in turn, then 200 with a
// pod list.
func statusSequence(t *testing.T, statuses ...int) (*apitest.Server, *atomic.Int32) {
	var n atomic.Int32
	list := fixtures.Load(t, "pod-list.json").Body
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api" {
			http.NotFound(w, r) // no discovery (a 404 has it asked), and not counted
			return
		}
		i := int(n.Add(1)) - 1
		w.Header().Set("Content-Type", "application/json")
		if i < len(statuses) {
			if statuses[i] == 429 {
				w.Header().Set("Retry-After", "0")
			}
			w.WriteHeader(statuses[i])
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","code":`+strconv.Itoa(statuses[i])+`,"message":"try later"}`)
			return
		}
		w.Write(list)
	})
	return srv, &n
}

func TestListRetries(t *testing.T) {
	t.Run("5xx and 429 then success", func(t *testing.T) {
		srv, n := statusSequence(t, 503, 429, 500)
		p, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
		require.NoError(t, err)
		require.Len(t, p.Items, 3)
		require.EqualValues(t, 4, n.Load())
	})
	t.Run("gives up and says after how many attempts", func(t *testing.T) {
		srv, n := statusSequence(t, 503, 503, 503, 503, 503, 503)
		c := newTestClient(t, srv.URL)
		c.RetryMax = 2
		_, err := c.Resource(pods).ListPage(context.Background(), ListOptions{})
		require.EqualValues(t, 3, n.Load())
		require.ErrorContains(t, err, "giving up after 3 attempts")
		var se *StatusError
		require.ErrorAs(t, err, &se)
		require.Equal(t, 503, se.Code)
		require.Equal(t, "GET", se.Verb)
	})
	t.Run("other 4xx at once", func(t *testing.T) {
		for _, code := range []int{400, 401, 403, 404, 409, 410} {
			srv, n := statusSequence(t, code)
			_, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
			var se *StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, code, se.Code)
			require.EqualValues(t, 1, n.Load(), "%d is not retried", code)
		}
	})
	t.Run("501 is not retried", func(t *testing.T) {
		srv, n := statusSequence(t, 501)
		_, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
		require.Error(t, err)
		require.EqualValues(t, 1, n.Load())
	})
	t.Run("too large resourceVersion is returned at once", func(t *testing.T) {
		fx := fixtures.Load(t, "list-rv-too-large.json")
		srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) { fx.ServeHTTP(w, nil) })
		_, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{ResourceVersion: "1000212", ResourceVersionMatch: "NotOlderThan"})
		require.True(t, IsResourceVersionTooLarge(err))
		require.Len(t, srv.Requests(), 1)
	})
	t.Run("connection refused", func(t *testing.T) {
		c := newTestClient(t, apitest.Refused(t))
		c.RetryMax = 1
		_, err := c.Resource(pods).ListPage(context.Background(), ListOptions{})
		require.True(t, isConnectionRefused(err), "%v", err)
		require.ErrorContains(t, err, "GET /api/v1/namespaces/fixtures/pods: giving up after 2 attempts")
		require.Equal(t, 1, strings.Count(err.Error(), "GET /api/v1/namespaces/fixtures/pods"), "the request is named once: %v", err)
	})
	t.Run("context cancelled while waiting to retry", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
			cancel()
			w.WriteHeader(503)
		})
		c := newTestClient(t, srv.URL)
		c.RetryWaitMin, c.RetryWaitMax = time.Hour, time.Hour
		_, err := c.Resource(pods).ListPage(ctx, ListOptions{})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorContains(t, err, "GET /api/v1/namespaces/fixtures/pods")
	})
}

// Writes are repeated only when the server asked for it.
func TestWriteRetries(t *testing.T) {
	body := []byte(`{"metadata":{"name":"a"}}`)
	srv, n := statusSequence(t, 500)
	_, err := newTestClient(t, srv.URL).Resource(pods).Create(context.Background(), body)
	require.True(t, IsInternalError(err), "%v", err)
	require.EqualValues(t, 1, n.Load(), "a 500 without Retry-After is not retried for a POST")

	srv, n = statusSequence(t, 429)
	_, err = newTestClient(t, srv.URL).Resource(pods).Create(context.Background(), body)
	require.NoError(t, err)
	require.EqualValues(t, 2, n.Load())
}

// A write is tried again after a refused connection, which nothing
// reached, but not after one cut once the request was sent: the server
// may have stored it, and a second create or update would not be the
// first's.
func TestWriteRetriesOnNetwork(t *testing.T) {
	body := []byte(`{"metadata":{"name":"a"}}`)
	t.Run("refused", func(t *testing.T) {
		c := newTestClient(t, apitest.Refused(t))
		c.RetryMax = 1
		_, err := c.Resource(pods).Create(context.Background(), body)
		require.True(t, isConnectionRefused(err), "%v", err)
		require.ErrorContains(t, err, "giving up after 2 attempts")
	})
	t.Run("cut after sending", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			io.Copy(io.Discard, r.Body)
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		}))
		t.Cleanup(srv.Close)
		c := newTestClient(t, srv.URL)
		_, err := c.Resource(pods).Create(context.Background(), body)
		require.Error(t, err)
		require.EqualValues(t, 1, n.Load(), "a POST the connection lost after sending is not repeated: %v", err)
	})
}

func TestBackoff(t *testing.T) {
	c := &Client{clock: clock.Real}
	lo, hi := 100*time.Millisecond, time.Second
	for attempt, full := range []time.Duration{100, 200, 400, 800, 1000, 1000} {
		full *= time.Millisecond
		for range 50 {
			d := c.backoff(lo, hi, attempt, nil)
			require.LessOrEqual(t, d, full)
			require.Greater(t, d, full/2)
		}
	}
	// A wait of 1 ns or none has no half to drop at random.
	require.Equal(t, time.Duration(1), c.backoff(1, time.Second, 0, nil))
	require.Zero(t, c.backoff(0, time.Second, 0, nil))
	resp := &http.Response{Header: http.Header{"Retry-After": {"3"}}}
	require.Equal(t, time.Second, c.backoff(lo, hi, 0, resp), "Retry-After, capped at the maximum")
	require.Equal(t, 3*time.Second, c.backoff(lo, 10*time.Second, 0, resp))
}

func TestCRUD(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodPost, http.MethodPut:
			require.Equal(t, "application/json", r.Header.Get("Content-Type"))
			w.Write(b)
		case http.MethodDelete:
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
		}
	})
	rc := newTestClient(t, srv.URL).Resource(Resource{Version: "v1", Resource: "configmaps"})
	ctx := context.Background()
	o, err := rc.Create(ctx, []byte(`{"metadata":{"name":"a","namespace":"ns1"},"data":{"k":"v"}}`))
	require.NoError(t, err)
	require.Equal(t, "a", o.Name())
	_, err = rc.Update(ctx, []byte(`{"metadata":{"name":"a","namespace":"ns1","resourceVersion":"3"}}`))
	require.NoError(t, err)
	rc.res.Namespace = "ns2"
	require.NoError(t, rc.Delete(ctx, "a"))
	_, err = rc.Create(ctx, []byte(`not json`))
	require.Error(t, err)
	_, err = rc.Update(ctx, []byte(`{"metadata":{}}`))
	require.ErrorContains(t, err, "object name")

	seen := srv.Requests()
	require.Len(t, seen, 3)
	require.Equal(t, "POST /api/v1/namespaces/ns1/configmaps", seen[0].Method+" "+seen[0].URL.Path)
	require.Equal(t, "PUT /api/v1/namespaces/ns1/configmaps/a", seen[1].Method+" "+seen[1].URL.Path)
	require.Equal(t, "DELETE /api/v1/namespaces/ns2/configmaps/a", seen[2].Method+" "+seen[2].URL.Path)
}

// conformance 37, conformance 57, decision 5: the client is the one place objects are
// transformed. managedFields are dropped while copying unless
// KeepManagedFields is set, then Transform runs once per object, before
// anything (the FIFO, the cache) sees it.
func TestTransformAndDropManagedFields(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "" {
			w.Write(fixtures.Load(t, "watch-from-rv.jsonl").Body)
			return
		}
		w.Write(fixtures.Load(t, "pod-list.json").Body)
	})
	rc := newTestClient(t, srv.URL).Resource(pods)
	kept, err := rc.List(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.False(t, kept.Items[0].Get("metadata.managedFields").Exists(), "dropped by default")
	rc.KeepManagedFields = true
	kept, err = rc.List(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.True(t, kept.Items[0].Get("metadata.managedFields").Exists(), "kept on request")
	rc.KeepManagedFields = false

	rc.Transform = func(o *raw.Object) (*raw.Object, error) {
		require.False(t, o.Get("metadata.managedFields").Exists(), "the transform runs after the drop")
		return raw.NewObject([]byte(`{"metadata":{"name":"t-` + o.Name() + `"}}`))
	}
	p, err := rc.List(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "t-web-1", p.Items[0].Name())
	w, err := rc.Watch(context.Background(), ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, "t-web-1", ev.Object.Name())

	boom := errors.New("boom")
	rc.Transform = func(o *raw.Object) (*raw.Object, error) { return nil, boom }
	_, err = rc.List(context.Background(), ListOptions{})
	require.ErrorIs(t, err, boom)
	rc.Transform = func(o *raw.Object) (*raw.Object, error) { return nil, nil }
	_, err = rc.List(context.Background(), ListOptions{})
	require.ErrorContains(t, err, "returned no object")
}

// A frame over MaxFrameSize is a clear error and the stream is closed.
func TestWatchFrameTooLarge(t *testing.T) {
	closed := make(chan struct{})
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, podFrame)
		io.WriteString(w, `{"type":"ADDED","object":{"metadata":{"name":"`+strings.Repeat("x", 4096)+`"}}}`)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(closed)
	})
	c := newTestClient(t, srv.URL)
	c.MaxFrameSize = 1024
	w, err := c.Resource(pods).Watch(testwait.Context(t), ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	_, err = w.Next()
	require.NoError(t, err)
	_, err = w.Next()
	require.ErrorIs(t, err, raw.ErrFrameTooLarge)
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorContains(t, err, "1024 bytes")
	testwait.Recv(t, closed, "the client to hang up")
}

func TestListItemTooLarge(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{},"items":[{"metadata":{"name":"`+strings.Repeat("x", 70000)+`"}}]}`)
	})
	c := newTestClient(t, srv.URL)
	c.MaxFrameSize = 64 << 10
	_, err := c.Resource(pods).ListPage(context.Background(), ListOptions{})
	require.ErrorIs(t, err, raw.ErrFrameTooLarge)
}

func TestListBodyErrors(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"truncated", `{"kind":"PodList","items":[{"metadata":{}}`},
		{"not an object", `[1,2]`},
		{"item not an object", `{"items":[1]}`},
		{"trailing data", `{"items":[]} {}`},
		{"bad metadata", `{"items":[{"metadata":{"name":5}}]}`},
		{"missing comma", `{"items":[{} {}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tc.body) })
			_, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
			require.Error(t, err)
			require.ErrorContains(t, err, "GET /api/v1/namespaces/fixtures/pods")
		})
	}
}

// Every 2xx is an answer, 299 included; anything else is a StatusError.
func TestAnyTwoHundredIsSuccess(t *testing.T) {
	list := fixtures.Load(t, "pod-list.json").Body
	for _, code := range []int{200, 203, 299, 300} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				w.Write(list)
			})
			_, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
			if code < 300 {
				require.NoError(t, err)
				return
			}
			var se *StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, code, se.Code)
		})
	}
}
