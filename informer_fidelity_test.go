package listwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// An informer with a misspelt field label does not sync on watchtest, as
// it does not on a real server: the wait fails fast with the server's 400
// (decision 7).
func TestInformerMisspeltFieldLabelFailsOnWatchtest(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"p","namespace":"prod"},"spec":{"nodeName":"n1"}}`)
	require.NoError(t, err)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	inf := NewInformer(c.Resource(watchtest.Pods).Namespace("prod"), 0, Selector{Field: "spec.nodename=n1"})
	runInBackground(t, inf)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err = inf.Wait(ctx)
	require.Error(t, err)
	assert.NoError(t, ctx.Err(), "a permanent error ends the wait at once")
	assert.Contains(t, err.Error(), "field label not supported: spec.nodename")
	se, ok := asStatusErr(err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, 400, se.Code)
}
