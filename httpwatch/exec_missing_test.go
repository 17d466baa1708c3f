package httpwatch

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
)

type countAttempts struct{ n atomic.Int64 }

func (c *countAttempts) Observe(RequestInfo) { c.n.Add(1) }

// decision 38: a request whose exec credential plugin is not installed
// fails at once, permanent (as a 401 is), and is not retried: no retry
// can install it.
func TestMissingExecPluginIsPermanentAtOnce(t *testing.T) {
	srv := apitest.Serve(t, func(_ http.ResponseWriter, _ *http.Request) { t.Error("no request reaches the server") })
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1, Exec: &kubeconfig.ExecConfig{
		Command: "/nonexistent/listwatch-credential-plugin", APIVersion: "client.authentication.k8s.io/v1"}})
	require.NoError(t, err)
	attempts := &countAttempts{}
	c.Metrics = attempts.Observe
	_, err = c.Resource(pods).List(testwait.Context(t), ListOptions{})
	require.Error(t, err)
	assert.ErrorIs(t, err, kubeconfig.ErrExecPluginMissing)
	assert.True(t, IsPermanent(err), "%v", err)
	assert.ErrorContains(t, err, "exec plugin /nonexistent/listwatch-credential-plugin is not installed")
	assert.EqualValues(t, 1, attempts.n.Load(), "one attempt, not RetryMax+1")
}
