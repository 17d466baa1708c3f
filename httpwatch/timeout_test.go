package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/stallproxy"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// Every non-watch request has a deadline (Config.Timeout, decision 36): a
// list whose connection goes silent half-way through its body, or before
// its headers, fails within it with an error that names the request, on
// HTTP/1.1 too, where no ping can find the silence. Each attempt has the
// bound, so the retried attempts end as well.
func TestRequestTimeoutBoundsSilentConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stall func(w http.ResponseWriter, p *stallproxy.Proxy)
	}{
		{"mid-body", func(w http.ResponseWriter, p *stallproxy.Proxy) {
			fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[%s`, testPod)
			w.(http.Flusher).Flush()
			p.Stall()
		}},
		{"before headers", func(w http.ResponseWriter, p *stallproxy.Proxy) { p.Stall() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p *stallproxy.Proxy
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tc.stall(w, p)
				<-r.Context().Done()
			}))
			t.Cleanup(srv.Close)
			p = stallproxy.New(t, strings.TrimPrefix(srv.URL, "http://"))
			c, err := NewClient(&kubeconfig.Config{Host: "http://" + p.Addr(), QPS: -1, Timeout: 200 * time.Millisecond})
			require.NoError(t, err)
			c.RetryMax, c.RetryWaitMin, c.RetryWaitMax = 1, time.Millisecond, time.Millisecond
			t.Cleanup(c.CloseIdleConnections)

			done := make(chan error, 1)
			go func() {
				_, err := c.Resource(Resource{Version: "v1", Resource: "pods"}).List(context.Background(), ListOptions{})
				done <- err
			}()
			err = testwait.Recv(t, done, "the list to fail at its deadline")
			require.Error(t, err)
			require.Contains(t, err.Error(), "/api/v1/pods")
			require.True(t, IsProbableEOF(err), "a timed-out request is a lost connection, retried by the reflector: %v", err)
		})
	}
}

// A client made from a Config that says nothing about timeouts still
// bounds every non-watch attempt.
func TestRequestTimeoutDefault(t *testing.T) {
	c, err := NewClient(&kubeconfig.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	require.Equal(t, kubeconfig.DefaultTimeout, c.list.Timeout)
	require.Zero(t, c.watch.Timeout, "a watch streams for as long as it hears from the server")
}
