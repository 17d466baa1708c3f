package watchtest_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// A namespaced resource read without a namespace is the caller's mistake,
// and a misspelt resource is one too: on a real server the client tells
// both from a missing object through discovery, and so it must on
// watchtest, or a reconcile's "deleted since" branch hides the bug in
// tests (decision 7).
func TestDiscoveryExplainsNotFound(t *testing.T) {
	s := newServer(t)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	_, err = c.Resource(watchtest.ConfigMaps).Get(ctx, "x")
	require.ErrorIs(t, err, httpwatch.ErrNamespaceRequired)
	assert.False(t, httpwatch.IsNotFound(err), "a path without a namespace is not a missing object: %v", err)

	_, err = c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmap", Namespace: "prod"}).Get(ctx, "x")
	require.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.Contains(t, err.Error(), "did you mean configmaps?")

	_, err = c.Resource(watchtest.ConfigMaps).Namespace("prod").Get(ctx, "x")
	assert.True(t, httpwatch.IsNotFound(err), "a missing object stays NotFound: %v", err)
}

// Discovery lists every registered resource, custom ones included, in the
// documents kube-apiserver 1.37 serves (golden fixtures), aggregated or
// not.
func TestDiscoveryDocuments(t *testing.T) {
	s := newServer(t)
	s.AddResource(widgets, watchtest.Definition{Kind: "Widget", Namespaced: true, Status: true})
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	rs, err := c.Discover(ctx)
	require.NoError(t, err)
	got := map[string]discovery.APIResource{}
	for _, r := range rs {
		got[r.String()] = r
	}
	require.Contains(t, got, "widgets.v1.example.com")
	assert.Equal(t, []string{"status"}, got["widgets.v1.example.com"].Subresources)
	assert.Equal(t, []string{"scale", "status"}, got["deployments.v1.apps"].Subresources)
	assert.Equal(t, []string{"po"}, got["pods.v1"].ShortNames)
	assert.False(t, got["namespaces.v1"].Namespaced)

	aggregated := "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, tc := range []struct{ path, accept, fixture, query string }{
		{"/api", aggregated, "discovery-api-aggregated.json", `items.0.versions.0.resources.#(resource=="pods")`},
		{"/api", aggregated, "discovery-api-aggregated.json", `items.0.versions.0.resources.#(resource=="namespaces")`},
		{"/apis", aggregated, "discovery-apis-aggregated.json", `items.#(metadata.name=="apps").versions.0.resources.#(resource=="deployments")`},
		{"/api/v1", "", "discovery-api-v1.json", `resources.#(name=="configmaps")`},
		{"/apis/apps/v1", "", "discovery-apis-apps-v1.json", `resources.#(name=="deployments/scale")`},
		{"/apis", "", "discovery-apis.json", `groups.#(name=="apps")`},
	} {
		code, body, h := doAccept(t, s, tc.path, tc.accept)
		require.Equal(t, 200, code, tc.path)
		want := gjson.GetBytes(fixture(t, tc.fixture), tc.query)
		have := gjson.GetBytes(body, tc.query)
		if tc.accept != "" {
			assert.Equal(t, tc.accept, h.Get("Content-Type"))
		}
		assert.Equal(t, withoutHash(want.Value()), withoutHash(have.Value()), "%s %s", tc.path, tc.query)
	}
}

func doAccept(t *testing.T, s *watchtest.Server, path, accept string) (int, []byte, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+path, nil)
	require.NoError(t, err)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b, resp.Header
}

func withoutHash(v any) any {
	if m, ok := v.(map[string]any); ok {
		delete(m, "storageVersionHash")
		if subs, ok := m["subresources"].([]any); ok {
			var kept []any
			for _, s := range subs {
				if n := s.(map[string]any)["subresource"]; n == "scale" || n == "status" {
					kept = append(kept, s)
				}
			}
			m["subresources"] = kept
		}
	}
	return v
}
