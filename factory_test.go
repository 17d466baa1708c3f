package listwatch

import (
	"context"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	podsRes = httpwatch.Resource{Version: "v1", Resource: "pods"}
	cmsRes  = httpwatch.Resource{Version: "v1", Resource: "configmaps"}
)

// conformance 76 77 78 79: one informer per resource; Start runs only those
// not started; Wait refuses at once an informer made after Start; the
// namespace and selectors apply to list and watch; a namespace index
// always exists; Shutdown waits for every goroutine.
func TestFactory(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	for _, p := range []string{
		`{"metadata":{"name":"a","namespace":"shop","labels":{"app":"web"}}}`,
		`{"metadata":{"name":"b","namespace":"shop","labels":{"app":"db"}}}`,
		`{"metadata":{"name":"c","namespace":"other","labels":{"app":"web"}}}`,
	} {
		_, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	f := NewFactory(client)
	f.Namespace = "shop"
	web := Selector{Label: "app=web"}
	pods := f.ForResource(podsRes, web)
	assert.Same(t, pods, f.ForResource(podsRes, web), "conformance 76: the same informer for the same resource")

	ctx, cancel := context.WithCancel(context.Background())
	f.Start(ctx)
	require.NoError(t, f.Wait(ctx), "conformance 78")

	cms := f.ForResource(cmsRes)
	require.ErrorIs(t, f.Wait(ctx), ErrNotStarted, "conformance 78: an informer not started is said at once")
	f.Start(ctx) // conformance 77: starts only the new one
	require.NoError(t, f.Wait(ctx))
	assert.True(t, cms.HasSynced())

	keys := pods.Indexer().ListKeys()
	assert.Equal(t, []string{"shop/a"}, keys, "conformance 79: namespace and selector apply")
	byNS, err := pods.Indexer().ByIndex(indexer.Namespace, "shop")
	require.NoError(t, err, "conformance 79: the namespace index exists")
	assert.Len(t, byNS, 1)
	for _, r := range s.Requests() {
		if r.Verb == "list" || r.Verb == "watch" {
			assert.Contains(t, r.Path, "/namespaces/shop/", "conformance 79")
			if r.Path == "/api/v1/namespaces/shop/pods" {
				assert.Equal(t, "app=web", r.Query.Get("labelSelector"), "conformance 79: selectors on %s", r.Verb)
			}
		}
	}

	cancel()
	f.Shutdown()
	assert.True(t, pods.IsStopped() && cms.IsStopped(), "conformance 78: Shutdown waits for every informer")
	f.Start(context.Background()) // conformance 77: no-op after Shutdown
	assert.True(t, f.ForResource(podsRes, web).IsStopped())
}
