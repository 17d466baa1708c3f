package httpwatch_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/apitest"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// discoveryServer answers discovery as the recorded kube-apiserver does:
// aggregated when asked for it and aggregated is on, plain otherwise (with
// /apis trimmed to the apps group, the only group version recorded).
func discoveryServer(t *testing.T, aggregatedOn bool) *apitest.Server {
	apis := fixtures.Load(t, "discovery-apis.json")
	var list map[string]any
	require.NoError(t, json.Unmarshal(apis.Body, &list))
	var apps []any
	for _, g := range list["groups"].([]any) {
		if g.(map[string]any)["name"] == "apps" {
			apps = append(apps, g)
		}
	}
	list["groups"] = apps
	apis.Body, _ = json.Marshal(list)
	return apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		aggregated := aggregatedOn && strings.Contains(r.Header.Get("Accept"), "apidiscovery.k8s.io")
		switch {
		case r.URL.Path == "/api" && aggregated:
			fixtures.Load(t, "discovery-api-aggregated.json").ServeHTTP(w, r)
		case r.URL.Path == "/apis" && aggregated:
			fixtures.Load(t, "discovery-apis-aggregated.json").ServeHTTP(w, r)
		case r.URL.Path == "/api":
			fixtures.Load(t, "discovery-api.json").ServeHTTP(w, r)
		case r.URL.Path == "/api/v1":
			fixtures.Load(t, "discovery-api-v1.json").ServeHTTP(w, r)
		case r.URL.Path == "/apis":
			apis.ServeHTTP(w, r)
		case r.URL.Path == "/apis/apps/v1":
			fixtures.Load(t, "discovery-apis-apps-v1.json").ServeHTTP(w, r)
		default:
			fixtures.Load(t, "list-unknown-resource.json").ServeHTTP(w, r)
		}
	})
}

func TestResourceFor(t *testing.T) {
	for _, aggregated := range []bool{true, false} {
		srv := discoveryServer(t, aggregated)
		c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
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
			got := r.Resource.Resource + "." + r.Version
			if r.Group != "" {
				got += "." + r.Group
			}
			assert.Equal(t, tc.want, got, "aggregated=%v %s", aggregated, tc.name)
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

		before := len(srv.Requests())
		_, err = c.ResourceFor(ctx, "deployments.v2.apps")
		assert.ErrorIs(t, err, httpwatch.ErrUnknownResource)
		assert.Greater(t, len(srv.Requests()), before, "an unknown name reads discovery again")
		before = len(srv.Requests())
		_, err = c.ResourceFor(ctx, "cm")
		require.NoError(t, err)
		assert.Equal(t, before, len(srv.Requests()), "a known name is served from the cache")
		if aggregated {
			assert.Equal(t, 2+2, len(srv.Requests()), "two reads (the first, and again for the unknown name) of two requests each")
		}
	}
}

// A namespaced Get or Delete without a namespace is an error of its own,
// not a 404 that IsNotFound would take for "gone".
func TestNamespaceRequired(t *testing.T) {
	srv := discoveryServer(t, true)
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
