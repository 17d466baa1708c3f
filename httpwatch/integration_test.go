package httpwatch

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/stretchr/testify/require"
)

// realAPI returns a client for the kube-apiserver named by REALAPI_URL,
// REALAPI_TOKEN and REALAPI_CA (a file), or skips the test (see package testkit/realapi).
func realAPI(t *testing.T) *Client {
	t.Helper()
	cfg := &kubeconfig.Config{Host: realapi.Env(t, "REALAPI_URL"), BearerToken: realapi.Env(t, "REALAPI_TOKEN"), Timeout: 30 * time.Second, QPS: -1}
	pem, err := os.ReadFile(realapi.Env(t, "REALAPI_CA"))
	require.NoError(t, err)
	cfg.CAData = pem
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// nextObjectEvent skips bookmarks.
func nextObjectEvent(t *testing.T, w Watcher) Event {
	t.Helper()
	for {
		ev, err := w.Next()
		require.NoError(t, err)
		require.NoError(t, ev.Err)
		if ev.Type != Bookmark {
			return ev
		}
	}
}

func TestRealAPIListWatch(t *testing.T) {
	c := realAPI(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	ns := fmt.Sprintf("httpwatch-it-%d", rand.Uint32())
	namespaces := c.Resource(Resource{Version: "v1", Resource: "namespaces"})
	_, err := namespaces.Create(ctx, []byte(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"`+ns+`"}}`))
	require.NoError(t, err)
	t.Cleanup(func() { namespaces.Delete(context.Background(), ns) })

	cms := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	for i := range 3 {
		_, err := cms.Create(ctx, fmt.Appendf(nil, `{"metadata":{"name":"cm-%d","labels":{"app.kubernetes.io/name":"it"}},"data":{"k":"%d"}}`, i, i))
		require.NoError(t, err)
	}

	t.Run("list in pages", func(t *testing.T) {
		pages := 0
		list, err := ListAll(ctx, cms, ListOptions{Limit: 2}, func(*Page) { pages++ })
		require.NoError(t, err)
		require.Equal(t, 2, pages)
		require.Len(t, list.Items, 3)
		require.NotEmpty(t, list.ResourceVersion)
		o := list.Items[0]
		require.Equal(t, "ConfigMap", o.Kind(), "inserted from the list's kind")
		require.Equal(t, "v1", o.APIVersion())
		require.Equal(t, ns, o.Namespace())
		v, ok := o.Label("app.kubernetes.io/name")
		require.True(t, ok)
		require.Equal(t, "it", v)
		require.Equal(t, "0", o.Get("data.k").String())
	})

	t.Run("watch from the list's resourceVersion", func(t *testing.T) {
		list, err := cms.List(ctx, ListOptions{})
		require.NoError(t, err)
		w, err := cms.Watch(ctx, ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: 30})
		require.NoError(t, err)
		defer w.Stop()

		_, err = cms.Create(ctx, []byte(`{"metadata":{"name":"cm-new"},"data":{"k":"new"}}`))
		require.NoError(t, err)
		ev := nextObjectEvent(t, w)
		require.Equal(t, Added, ev.Type)
		require.Equal(t, "cm-new", ev.Object.Name())

		got, err := cms.Get(ctx, "cm-0")
		require.NoError(t, err)
		_, err = cms.Update(ctx, []byte(`{"metadata":{"name":"cm-0","resourceVersion":"`+got.ResourceVersion()+`"},"data":{"k":"changed"}}`))
		require.NoError(t, err)
		ev = nextObjectEvent(t, w)
		require.Equal(t, Modified, ev.Type)
		require.Equal(t, "changed", ev.Object.Get("data.k").String())

		// A stale resourceVersion is a conflict.
		_, err = cms.Update(ctx, []byte(`{"metadata":{"name":"cm-0","resourceVersion":"`+got.ResourceVersion()+`"},"data":{"k":"stale"}}`))
		require.True(t, IsConflict(err), "%v", err)

		require.NoError(t, cms.Delete(ctx, "cm-1"))
		ev = nextObjectEvent(t, w)
		require.Equal(t, Deleted, ev.Type)
		require.Equal(t, "cm-1", ev.Object.Name())

		_, err = cms.Get(ctx, "cm-1")
		require.True(t, IsNotFound(err), "%v", err)
	})

	t.Run("metadata only", func(t *testing.T) {
		meta := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
		meta.MetadataOnly = true
		meta.KeepManagedFields = false
		list, err := meta.List(ctx, ListOptions{})
		require.NoError(t, err)
		require.NotEmpty(t, list.Items)
		for _, o := range list.Items {
			require.Equal(t, "PartialObjectMetadata", o.Kind())
			require.False(t, o.Get("data").Exists(), "no data in metadata-only mode")
			require.False(t, o.Get("metadata.managedFields").Exists())
			require.NotEmpty(t, o.UID())
		}
		o, err := meta.Get(ctx, "cm-0")
		require.NoError(t, err)
		require.Equal(t, "PartialObjectMetadata", o.Kind())
		require.False(t, o.Get("data").Exists())

		// A streaming list: every object, then the initial-events-end
		// bookmark.
		w, err := meta.Watch(ctx, ListOptions{SendInitialEvents: true, ResourceVersionMatch: "NotOlderThan", AllowWatchBookmarks: true, TimeoutSeconds: 30})
		require.NoError(t, err)
		defer w.Stop()
		added := 0
		for {
			ev, err := w.Next()
			require.NoError(t, err)
			if ev.Type == Bookmark {
				v, _ := ev.Object.Annotation("k8s.io/initial-events-end")
				if v == "true" {
					require.NotEmpty(t, ev.Object.ResourceVersion())
					break
				}
				continue
			}
			require.Equal(t, Added, ev.Type)
			require.Equal(t, "PartialObjectMetadata", ev.Object.Kind())
			require.False(t, ev.Object.Get("data").Exists())
			added++
		}
		require.Equal(t, len(list.Items), added)
	})

	t.Run("pods", func(t *testing.T) {
		podsRC := c.Resource(Resource{Version: "v1", Resource: "pods", Namespace: ns})
		w, err := podsRC.Watch(ctx, ListOptions{ResourceVersion: "0", TimeoutSeconds: 30})
		require.NoError(t, err)
		defer w.Stop()
		_, err = podsRC.Create(ctx, []byte(`{"metadata":{"name":"p1"},"spec":{"containers":[{"name":"c","image":"nginx"}]}}`))
		require.NoError(t, err)
		ev := nextObjectEvent(t, w)
		require.Equal(t, Added, ev.Type)
		require.Equal(t, "p1", ev.Object.Name())
		require.Equal(t, "Pod", ev.Object.Kind())
		list, err := podsRC.List(ctx, ListOptions{})
		require.NoError(t, err)
		require.Len(t, list.Items, 1)
		require.Equal(t, "nginx", list.Items[0].Get("spec.containers.0.image").String())
	})

	t.Run("a 300 KB list, whole and in pages", func(t *testing.T) {
		big := c.Resource(Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
		filler := strings.Repeat("x", 2000)
		for i := range 150 {
			_, err := big.Create(ctx, fmt.Appendf(nil, `{"metadata":{"name":"big-%03d","labels":{"size":"big"}},"data":{"f":"%s"}}`, i, filler))
			require.NoError(t, err)
		}
		whole, err := big.ListPage(ctx, ListOptions{LabelSelector: "size=big"})
		require.NoError(t, err)
		require.Len(t, whole.Items, 150)
		paged, err := ListAll(ctx, big, ListOptions{LabelSelector: "size=big", Limit: 40}, nil)
		require.NoError(t, err)
		require.Len(t, paged.Items, 150)
		for i, o := range paged.Items {
			require.Equal(t, fmt.Sprintf("big-%03d", i), o.Name())
			require.Equal(t, whole.Items[i].String(), o.String())
		}
	})

	t.Run("watch ends at timeoutSeconds with io.EOF", func(t *testing.T) {
		w, err := cms.Watch(ctx, ListOptions{ResourceVersion: "0", TimeoutSeconds: 1})
		require.NoError(t, err)
		defer w.Stop()
		for {
			_, err := w.Next()
			if err != nil {
				require.Equal(t, io.EOF, err)
				return
			}
		}
	})
}
