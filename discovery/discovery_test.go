package discovery_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kubectl's names resolve; an unknown name has discovery read again at
// most every few seconds (decision 23).
func TestResourceFor(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		mode := legacyDiscovery
		if aggregated {
			mode = v2Discovery
		}
		srv := newFakeDiscovery(t, mode)
		srv.metricsUp.Store(true)
		clk := clock.NewFake(time.Unix(1_700_000_000, 0))
		c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1, Clock: clk})
		require.NoError(t, err)
		defer c.CloseIdleConnections()
		ctx := context.Background()
		for _, tc := range []struct{ name, want string }{
			{"pods", "pods.v1"},
			{"pod", "pods.v1"},
			{"po", "pods.v1"},
			{"Pod", "pods.v1"},
			{"pods.v1", "pods.v1"},
			{"deploy", "deployments.v1.apps"},
			{"deployments.apps", "deployments.v1.apps"},
			{"deployment.apps", "deployments.v1.apps"},
			{"deployments.v1.apps", "deployments.v1.apps"},
			{"ns", "namespaces.v1"},
		} {
			r, err := c.ResourceFor(ctx, tc.name)
			require.NoError(t, err, "aggregated=%v %s", aggregated, tc.name)
			assert.Equal(t, tc.want, r.String(), "aggregated=%v %s", aggregated, tc.name)
		}
		pods, err := c.ResourceFor(ctx, "po")
		require.NoError(t, err)
		assert.True(t, pods.Namespaced)
		assert.Equal(t, "Pod", pods.Kind)
		assert.Contains(t, pods.Subresources, "status")
		assert.Contains(t, pods.Verbs, "watch")
		ns, err := c.ResourceFor(ctx, "namespaces")
		require.NoError(t, err)
		assert.False(t, ns.Namespaced)
		deploy, err := c.ResourceFor(ctx, "deploy")
		require.NoError(t, err)
		assert.Contains(t, deploy.Subresources, "scale")

		before := srv.discoveryReads()
		_, err = c.ResourceFor(ctx, "deployments.v2.apps")
		assert.ErrorIs(t, err, discovery.ErrUnknownResource)
		assert.Equal(t, before, srv.discoveryReads(), "discovery read just now is not read again for an unknown name")
		clk.Step(5 * time.Second)
		_, err = c.ResourceFor(ctx, "deploymnts")
		assert.ErrorIs(t, err, discovery.ErrUnknownResource)
		assert.ErrorContains(t, err, "did you mean deployments in apps/v1?")
		assert.Greater(t, srv.discoveryReads(), before, "an unknown name reads discovery again once it is a few seconds old")
		before = srv.discoveryReads()
		_, err = c.ResourceFor(ctx, "cm")
		require.NoError(t, err)
		assert.Equal(t, before, srv.discoveryReads(), "a known name is served from the cache")
		if aggregated {
			assert.Equal(t, 2+2, srv.discoveryReads(), "two reads (the first, and again for the unknown name) of two requests each")
		}
	}
}

// A namespaced Get or Delete without a namespace is an error of its own,
// not a 404 that IsNotFound would take for "gone".
func TestNamespaceRequired(t *testing.T) {
	srv := newFakeDiscovery(t, v2Discovery)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	pods := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	_, err = pods.Get(context.Background(), "web")
	assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired)
	assert.False(t, httpwatch.IsNotFound(err))
	err = pods.Delete(context.Background(), "web")
	assert.ErrorIs(t, err, httpwatch.ErrNamespaceRequired)

	nodes := c.Resource(httpwatch.Resource{Version: "v1", Resource: "nodes"})
	_, err = nodes.Get(context.Background(), "node-1")
	assert.True(t, httpwatch.IsNotFound(err), "a cluster-scoped Get goes to the server: %v", err)

	// A server without discovery is asked once, then trusted.
	plain := apitest.Serve(t, fixtures.Load(t, "get-missing.json").ServeHTTP)
	c2, err := httpwatch.NewClient(&kubeconfig.Config{Host: plain.URL, QPS: -1})
	require.NoError(t, err)
	defer c2.CloseIdleConnections()
	pods2 := c2.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	for range 2 {
		_, err = pods2.Get(context.Background(), "web")
		assert.True(t, httpwatch.IsNotFound(err))
	}
	assert.Len(t, plain.Requests(), 3, "one discovery request, then two gets")
}

// A server whose discovery lists nothing serves no resource of any name:
// ResourceFor fails with ErrUnknownResource, never an empty resource. A
// server without discovery cannot tell, and says so instead (decision 24).
func TestResourceForOnAnEmptyServer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		docs    documents
		unknown bool
	}{
		{"aggregated, no groups", documents{
			"/api":  `{"kind":"APIGroupDiscoveryList","items":[]}`,
			"/apis": `{"kind":"APIGroupDiscoveryList","items":[]}`,
		}, true},
		{"legacy, no versions", documents{
			"/api":  `{"kind":"APIVersions","versions":[]}`,
			"/apis": `{"kind":"APIGroupList","groups":[]}`,
		}, true},
		{"no discovery", documents{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := discovery.New(tc.docs).ResourceFor(context.Background(), "pods")
			require.Error(t, err)
			assert.Zero(t, r)
			assert.Equal(t, tc.unknown, errors.Is(err, discovery.ErrUnknownResource), "%v", err)
		})
	}
}
