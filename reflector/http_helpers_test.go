package reflector

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/watchtest"
)

var pods = httpwatch.Resource{Version: "v1", Resource: "pods"}

// newTestClient returns a client for url with fast retries and no rate
// limit.
func newTestClient(t testing.TB, url string) *httpwatch.Client {
	t.Helper()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: url, QPS: -1, Timeout: 10 * time.Second})
	require.NoError(t, err)
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// serveOnePod starts a watchtest server holding pod ns/a, with no periodic
// bookmarks (so a watch carries only what the test writes), closed after
// the reflector stops.
func serveOnePod(t *testing.T) *watchtest.Server {
	t.Helper()
	s := watchtest.NewUnstartedServer()
	s.BookmarkInterval = 0
	s.Start()
	t.Cleanup(s.Close) // after the reflector stops
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	return s
}

// statusOf returns the *StatusError the client makes of what h answers to
// a list ("GET") or a watch ("WATCH"), without retrying.
func statusOf(t *testing.T, verb string, h http.HandlerFunc) *httpwatch.StatusError {
	t.Helper()
	c := newTestClient(t, apitest.Serve(t, h).URL)
	c.RetryMax = 0
	var err error
	if verb == "WATCH" {
		_, err = c.Resource(pods).Watch(context.Background(), httpwatch.ListOptions{})
	} else {
		_, err = c.Resource(pods).ListPage(context.Background(), httpwatch.ListOptions{})
	}
	var se *httpwatch.StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	return se
}

// eventOf decodes one watch frame as the client does.
func eventOf(t *testing.T, frame string) httpwatch.Event {
	t.Helper()
	c := newTestClient(t, apitest.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, frame)
	}).URL)
	w, err := c.Resource(pods).Watch(context.Background(), httpwatch.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	ev, err := w.Next()
	require.NoError(t, err)
	return ev
}

// tooLargeFixture is the 504 a kube-apiserver 1.37 answered to a list at a
// resourceVersion it had not reached.
func tooLargeFixture(t *testing.T) error {
	t.Helper()
	err := statusOf(t, "GET", fixtures.Load(t, "list-rv-too-large.json").ServeHTTP)
	require.True(t, httpwatch.IsResourceVersionTooLarge(err), "%v", err)
	return err
}
