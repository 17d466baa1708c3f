package httpwatch

import (
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/require"
)

func serveFixture(t testing.TB, name string) *apitest.Server {
	fx := fixtures.Load(t, name)
	return apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) { fx.ServeHTTP(w, nil) })
}

// newTestClient returns a client for srv with fast retries and no rate
// limit.
func newTestClient(t testing.TB, url string) *Client {
	t.Helper()
	c, err := NewClient(&kubeconfig.Config{Host: url, QPS: -1, Timeout: 10 * time.Second})
	require.NoError(t, err)
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	return c
}

var pods = Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"}
