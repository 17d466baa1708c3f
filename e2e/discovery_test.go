package e2e

import (
	"testing"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectl's resource names resolve through the real server's discovery.
func TestRealAPIResourceFor(t *testing.T) {
	c := client(t)
	for name, want := range map[string]httpwatch.Resource{
		"po":                  {Version: "v1", Resource: "pods"},
		"deploy":              {Group: "apps", Version: "v1", Resource: "deployments"},
		"deployments.apps":    {Group: "apps", Version: "v1", Resource: "deployments"},
		"deployments.v1.apps": {Group: "apps", Version: "v1", Resource: "deployments"},
		"Lease":               {Group: "coordination.k8s.io", Version: "v1", Resource: "leases"},
		"events":              {Version: "v1", Resource: "events"},
	} {
		r, err := c.ResourceFor(t.Context(), name)
		require.NoError(t, err, name)
		assert.Equal(t, want, httpwatch.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource}, name)
	}
	_, err := c.ResourceFor(t.Context(), "nosuchthings")
	assert.ErrorIs(t, err, discovery.ErrUnknownResource)
}
