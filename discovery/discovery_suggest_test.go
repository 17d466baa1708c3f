package discovery_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// A misspelt name qualified by its group, or by version and group, gets
// the same "did you mean" as the bare name: the suggestion looks at the
// name before the first dot (decision 23).
func TestResourceForSuggestsForQualifiedNames(t *testing.T) {
	srv := newFakeDiscovery(t, v2Discovery)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	for name, want := range map[string]string{
		"deploymnts":         "(did you mean deployments in apps/v1?)",
		"deploymnts.apps":    "(did you mean deployments in apps/v1?)",
		"deploymnts.v1.apps": "(did you mean deployments in apps/v1?)",
		"cnfigmaps.v1":       "(did you mean configmaps in v1?)",
	} {
		_, err := c.ResourceFor(context.Background(), name)
		require.ErrorIs(t, err, httpwatch.ErrUnknownResource, name)
		assert.ErrorContains(t, err, `resource "`+name+`" `+want, name)
	}
}
