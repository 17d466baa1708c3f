package httpwatch

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/stallproxy"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// stalledServer is an HTTP/2 API server of one pod reached through a
// proxy that can go silent, and a client for it with a short HTTP/2
// health check.
type stalledServer struct {
	proxy  *stallproxy.Proxy
	client *Client
	log    *testlog.Log
}

const testPod = `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"1"}}`

func newStalledServer(t *testing.T) *stalledServer {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("watch") == "" {
			fmt.Fprintf(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[%s]}`, testPod)
			return
		}
		fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", testPod)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close) // after the proxy's Cleanup has cut the stalled connections
	p := stallproxy.New(t, srv.Listener.Addr().String())
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	c, err := NewClient(&kubeconfig.Config{
		Host: "https://" + p.Addr(), CAData: ca, QPS: -1,
		PingAfter: 50 * time.Millisecond, PingTimeout: 200 * time.Millisecond,
	})
	require.NoError(t, err)
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	logger, log := testlog.NewLogger()
	c.Logger = logger
	t.Cleanup(c.CloseIdleConnections)
	return &stalledServer{proxy: p, client: c, log: log}
}

// warnings returns what was logged at Warn and above.
func (s *stalledServer) warnings() []string { return s.log.Above() }

func watchOne(t *testing.T, rc *ResourceClient) Watcher {
	t.Helper()
	w, err := rc.Watch(context.Background(), ListOptions{})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, Added, ev.Type)
	return w
}

// The HTTP/2 health check (decision 36) closes a connection that went
// silent, and every watch on it ends with an error that says so, names
// the server and that the reflector resumes from (IsProbableEOF). The
// client says nothing above Debug: whoever meets the error says it, by
// the failure table (decision 38). Without the check, Next waits for ever.
func TestPingEndsWatchesOnSilentConnection(t *testing.T) {
	s := newStalledServer(t)
	rc := s.client.Resource(Resource{Version: "v1", Resource: "pods"})
	watches := []Watcher{watchOne(t, rc), watchOne(t, rc)}
	require.Equal(t, 1, s.proxy.Accepted(), "both watches share one HTTP/2 connection")

	s.proxy.Stall()
	for i, w := range watches {
		done := make(chan error, 1)
		go func() {
			_, err := w.Next()
			done <- err
		}()
		err := testwait.Recv(t, done, fmt.Sprintf("watch %d to end once the ping goes unanswered", i))
		require.ErrorIs(t, err, ErrConnectionLost)
		require.True(t, IsProbableEOF(err), "a lost connection resumes the watch: %v", err)
		require.ErrorContains(t, err, "no answer to an HTTP/2 ping within 200ms: connection to "+s.proxy.Addr()+" closed")
	}
	_, err := rc.List(testwait.Context(t), ListOptions{})
	require.NoError(t, err)
	require.Empty(t, s.warnings(), "the client itself says nothing above Debug")
}

// A list sent on the connection after it went silent (decision 36) does not wait out its
// context: the ping fails the connection, and the list is retried on a new
// one.
func TestPingRetriesListOnNewConnection(t *testing.T) {
	s := newStalledServer(t)
	rc := s.client.Resource(Resource{Version: "v1", Resource: "pods"})
	watchOne(t, rc)
	s.proxy.Stall()

	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	page, err := rc.List(ctx, ListOptions{})
	require.NoError(t, err, "the list is retried on a new connection")
	require.Len(t, page.Items, 1)
	require.Equal(t, 2, s.proxy.Accepted())
	require.Empty(t, s.warnings())
}

// A client whose Transport is the caller's does not know its ping
// timeout, and says so rather than a wrong figure.
func TestLostConnectionWithoutKnownPingTimeout(t *testing.T) {
	c, err := NewClient(&kubeconfig.Config{Host: "https://example.invalid", Transport: http.DefaultTransport})
	require.NoError(t, err)
	err = c.explainLost(fmt.Errorf("read: %w", errors.New(pingLost)))
	require.ErrorIs(t, err, ErrConnectionLost)
	require.ErrorContains(t, err, "no answer to an HTTP/2 ping in time: connection to example.invalid closed")
	require.NoError(t, c.explainLost(nil))
	other := errors.New("read: connection reset by peer")
	require.Same(t, other, c.explainLost(other), "other errors pass as they are")
}

// A request, not only a watch's body, that the HTTP/2 health check fails
// before its answer says so (decision 36): with no retry left, the caller
// gets ErrConnectionLost, naming the server, not net/http's bare message.
func TestPingFailsRequestWithConnectionLost(t *testing.T) {
	s := newStalledServer(t)
	s.client.RetryMax = 0
	rc := s.client.Resource(Resource{Version: "v1", Resource: "pods"})
	watchOne(t, rc)
	s.proxy.Stall()

	_, err := rc.List(testwait.Context(t), ListOptions{})
	require.ErrorIs(t, err, ErrConnectionLost)
	require.ErrorContains(t, err, "no answer to an HTTP/2 ping within 200ms: connection to "+s.proxy.Addr()+" closed")
	require.Empty(t, s.warnings())
}
