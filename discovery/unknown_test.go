package discovery_test

import (
	"context"
	"testing"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A misspelt resource is an error of its own kind from the first request
// of every verb, with the likely name, never an "already deleted" 404
// (decision 24).
func TestUnknownResource(t *testing.T) {
	for _, mode := range []discoveryMode{v2Discovery, legacyDiscovery} {
		f := newFakeDiscovery(t, mode)
		f.metricsUp.Store(true)
		c, _ := newDiscoveryClient(t, f)
		ctx := context.Background()
		cm := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmap", Namespace: "default"})
		obj := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}}`)
		requests := map[string]func() error{
			"list": func() error { _, err := cm.List(ctx, httpwatch.ListOptions{}); return err },
			"watch": func() error {
				w, err := cm.Watch(ctx, httpwatch.ListOptions{})
				if err == nil {
					w.Stop()
				}
				return err
			},
			"get":           func() error { _, err := cm.Get(ctx, "a"); return err },
			"get, all ns":   func() error { _, err := cm.Namespace("").Get(ctx, "a"); return err },
			"create":        func() error { _, err := cm.Create(ctx, obj); return err },
			"update":        func() error { _, err := cm.Update(ctx, obj); return err },
			"patch":         func() error { _, err := cm.Patch(ctx, "a", httpwatch.MergePatch, []byte(`{}`)); return err },
			"delete":        func() error { return cm.Delete(ctx, "a") },
			"subresource":   func() error { _, err := cm.Subresource("status").Get(ctx, "a"); return err },
			"deletecollect": func() error { return cm.DeleteCollection(ctx, httpwatch.ListOptions{}, httpwatch.DeleteOptions{}) },
		}
		for name, request := range requests {
			before := len(f.Requests()) - f.discoveryReads()
			err := request()
			require.ErrorIs(t, err, discovery.ErrUnknownResource, "%s %s", mode, name)
			assert.ErrorContains(t, err, `the core API v1 serves no resource "configmap" (did you mean configmaps?)`, name)
			assert.False(t, httpwatch.IsNotFound(err), "%s: a misspelt resource is not an object gone", name)
			assert.True(t, httpwatch.IsPermanent(err), name)
			assert.Equal(t, 404, statusCode(err), "%s: the server's answer stays in the chain", name)
			assert.LessOrEqual(t, len(f.Requests())-f.discoveryReads()-before, 1, "%s: one request", name)
		}
		want := 2 // /api and /apis, once
		if mode == legacyDiscovery {
			want += 3
		}
		assert.Equal(t, want, f.discoveryReads(), "%s: discovery is read once, not per request", mode)
	}
}

// The suggestion comes from plurals, singulars, short names, kinds, case
// and edit distance, in any group (decision 24).
func TestUnknownResourceSuggestion(t *testing.T) {
	f := newFakeDiscovery(t, v2Discovery)
	f.metricsUp.Store(true)
	c, _ := newDiscoveryClient(t, f)
	for _, tc := range []struct {
		r    httpwatch.Resource
		want string
	}{
		{httpwatch.Resource{Version: "v1", Resource: "ConfigMaps"}, `serves no resource "ConfigMaps" (did you mean configmaps?)`},
		{httpwatch.Resource{Version: "v1", Resource: "ConfigMap"}, "(did you mean configmaps?)"},
		{httpwatch.Resource{Version: "v1", Resource: "cm"}, "(did you mean configmaps?)"},
		{httpwatch.Resource{Version: "v1", Resource: "sevrices"}, "(did you mean services?)"},
		{httpwatch.Resource{Version: "v1", Resource: "deployments"}, "(did you mean deployments in apps/v1?)"},
		{httpwatch.Resource{Version: "v1", Resource: "deploy"}, "(did you mean deployments in apps/v1?)"},
		{httpwatch.Resource{Group: "apps", Version: "v2", Resource: "deployments"}, "the server serves no apps/v2 (it serves apps/v1) (did you mean deployments in apps/v1?)"},
		{httpwatch.Resource{Group: "app", Version: "v1", Resource: "deployments"}, `the server serves no API group "app" (did you mean deployments in apps/v1?)`},
		{httpwatch.Resource{Version: "v2", Resource: "pods"}, `the server serves no v2 (it serves v1) (did you mean pods in v1?)`},
		{httpwatch.Resource{Version: "v1", Resource: "gizmos"}, `the core API v1 serves no resource "gizmos": the server has no such resource`},
	} {
		_, err := c.Resource(tc.r).List(context.Background(), httpwatch.ListOptions{})
		require.ErrorIs(t, err, discovery.ErrUnknownResource, tc.r.String())
		assert.ErrorContains(t, err, tc.want)
	}
}

// A namespaced Get without a namespace is an error of its own, not a 404
// that IsNotFound would take for "gone", whether discovery is aggregated or
// not (decision 24).
func TestNamespaceRequiredEverywhere(t *testing.T) {
	for _, mode := range []discoveryMode{v2Discovery, v2beta1Discovery, legacyDiscovery} {
		f := newFakeDiscovery(t, mode)
		c, _ := newDiscoveryClient(t, f)
		for _, r := range []httpwatch.Resource{corePods, deployments} {
			_, err := c.Resource(r).Get(context.Background(), "web")
			require.ErrorIs(t, err, httpwatch.ErrNamespaceRequired, "%s %s", mode, r)
			assert.False(t, httpwatch.IsNotFound(err))
			assert.True(t, httpwatch.IsPermanent(err))
		}
	}
}
