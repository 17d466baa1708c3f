package httpwatch

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDescribeRequest(t *testing.T) {
	for _, tc := range []struct {
		method, url, prefix string
		verb, resource      string
	}{
		{"GET", "/api/v1/pods", "", "list", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods", "", "list", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=1&resourceVersion=5", "", "watch", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods?watch=false", "", "list", "pods"},
		{"GET", "/api/v1/namespaces/ns/pods/web", "", "get", "pods"},
		{"PUT", "/api/v1/namespaces/ns/pods/web/status", "", "update", "pods/status"},
		{"GET", "/api/v1/namespaces", "", "list", "namespaces"},
		{"GET", "/api/v1/namespaces/ns", "", "get", "namespaces"},
		{"PUT", "/api/v1/namespaces/ns/finalize", "", "update", "namespaces/finalize"},
		{"PATCH", "/api/v1/namespaces/ns/status", "", "patch", "namespaces/status"},
		{"POST", "/apis/apps/v1/namespaces/ns/deployments", "", "create", "deployments.apps"},
		{"PUT", "/apis/apps/v1/namespaces/ns/deployments/d/scale", "", "update", "deployments.apps/scale"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments/d", "", "delete", "deployments.apps"},
		{"DELETE", "/apis/apps/v1/namespaces/ns/deployments", "", "deletecollection", "deployments.apps"},
		{"GET", "/apis/example.com/v1/widgets", "", "list", "widgets.example.com"},
		{"GET", "/proxy/k8s/api/v1/pods", "/proxy/k8s/", "list", "pods"},
		{"GET", "/apis", "", "get", ""},
		{"GET", "/version", "", "get", ""},
	} {
		req := httptest.NewRequest(tc.method, tc.url, nil)
		verb, res := describe(req, tc.prefix)
		assert.Equal(t, tc.verb+" "+tc.resource, verb+" "+res, "%s %s", tc.method, tc.url)
	}
}

type recordedMetrics struct {
	mu  sync.Mutex
	got []RequestInfo
}

func (m *recordedMetrics) Observe(i RequestInfo) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.got = append(m.got, i)
}

// Every attempt is observed, a retried one included, and a failed attempt
// is logged at Debug without the credential or the query.
func TestClientObservesEveryAttempt(t *testing.T) {
	var calls int
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"1"}}`)
	}))
	defer srv.Close()
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, BearerToken: "hunter2", QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	c.RetryWaitMin, c.RetryWaitMax = 0, 0
	m := &recordedMetrics{}
	c.Metrics = m.Observe
	var log bytes.Buffer
	c.Logger = slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))

	_, err = c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: "ns"}).Get(context.Background(), "a")
	require.NoError(t, err)
	require.Len(t, m.got, 2)
	for i, code := range []int{503, 200} {
		assert.Equal(t, "get", m.got[i].Verb)
		assert.Equal(t, "configmaps", m.got[i].Resource)
		assert.Equal(t, code, m.got[i].Code)
	}
	assert.Contains(t, log.String(), "request attempt failed")
	assert.Contains(t, log.String(), "code=503")
	assert.NotContains(t, log.String(), "hunter2")
	assert.Equal(t, 1, strings.Count(log.String(), "\n"), "the success is not logged")
}

// An attempt is logged as failed at Debug, with its verb and resource even
// without Metrics, when the client may retry it: a 429 or any 5xx, 500
// included, not a 4xx the caller has to deal with.
func TestFailedAttemptsLoggedAtDebug(t *testing.T) {
	for _, tc := range []struct {
		code   int
		logged bool
	}{{500, true}, {503, true}, {429, true}, {404, false}, {499, false}} {
		t.Run(strconv.Itoa(tc.code), func(t *testing.T) {
			srv, _ := statusSequence(t, tc.code, tc.code)
			c := newTestClient(t, srv.URL)
			c.RetryMax = 0
			logger, log := testlog.NewLogger()
			c.Logger = logger
			_, err := c.Resource(pods).ListPage(context.Background(), ListOptions{})
			require.Error(t, err)
			var got []string
			for _, ln := range log.Lines(slog.LevelDebug) {
				if ln.Msg == "httpwatch: request attempt failed" {
					got = append(got, ln.Text)
				}
			}
			if !tc.logged {
				assert.Empty(t, got)
				return
			}
			require.Len(t, got, 1)
			assert.Contains(t, got[0], "verb=list resource=pods")
			assert.Contains(t, got[0], "code="+strconv.Itoa(tc.code))
		})
	}
}
