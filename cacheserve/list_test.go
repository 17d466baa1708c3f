package cacheserve

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// seed creates pods across namespaces, nodes and labels, then changes a
// few, so the history has updates and deletes.
func seed(t *testing.T, up *watchtest.Server) {
	t.Helper()
	for _, p := range []string{
		pod("shop", "web-1", "node-a", map[string]string{"app": "web"}),
		pod("shop", "web-2", "node-b", map[string]string{"app": "web"}),
		pod("shop", "db-1", "node-a", map[string]string{"app": "db"}),
		pod("blog", "web-1", "node-b", map[string]string{"app": "web"}),
		pod("blog", "cache-1", "node-a", map[string]string{"app": "cache"}),
		pod("ops", "agent", "node-a", nil),
	} {
		_, err := up.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
}

// normalList is a list response with what may differ by how an object
// reached the cache taken out: an item's kind and apiVersion (a watch
// event's object has them, a list's item not).
type normalList struct {
	Kind, APIVersion string
	Metadata         map[string]any
	Items            []map[string]any
}

func normal(t *testing.T, b []byte) normalList {
	t.Helper()
	var l normalList
	require.NoError(t, json.Unmarshal(b, &l), "%s", b)
	for _, it := range l.Items {
		delete(it, "kind")
		delete(it, "apiVersion")
	}
	return l
}

// TestListAnswersAsUpstream is decision 43: every list the cache answers
// is the upstream's own answer to the same request, at the same version:
// whole, by namespace, by label and field selectors, in pages with their
// continue tokens and remainingItemCount, and at an exact older version.
func TestListAnswersAsUpstream(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	first := r.caughtUp(t)
	_, err := r.up.Update(watchtest.Pods, pod("shop", "web-2", "node-a", map[string]string{"app": "web", "v": "2"}))
	require.NoError(t, err)
	_, err = r.up.Delete(watchtest.Pods, "blog", "cache-1")
	require.NoError(t, err)
	_, err = r.up.Create(watchtest.Pods, pod("blog", "new-1", "node-b", map[string]string{"app": "web"}))
	require.NoError(t, err)
	r.caughtUp(t)
	exact := url.Values{"resourceVersion": {itoa(first)}, "resourceVersionMatch": {"Exact"}}.Encode()

	for _, q := range []string{
		"/api/v1/pods",
		"/api/v1/pods?resourceVersion=0",
		"/api/v1/namespaces/shop/pods",
		"/api/v1/pods?labelSelector=app%3Dweb",
		"/api/v1/pods?labelSelector=app+in+(web,db),v!%3D2",
		"/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a",
		"/api/v1/namespaces/blog/pods?fieldSelector=metadata.name%3Dweb-1",
		"/api/v1/pods?limit=2",
		"/api/v1/namespaces/shop/pods?limit=1",
		"/api/v1/pods?limit=2&labelSelector=app%3Dweb",
		"/api/v1/pods?" + exact,
		"/api/v1/pods?limit=3&" + exact,
	} {
		t.Run(q, func(t *testing.T) {
			path := q
			for page := 0; page < 10; page++ {
				code, h, got := get(t, r.local.URL, path)
				wcode, _, want := get(t, r.up.URL, path)
				require.Equal(t, wcode, code, "%s\nupstream: %s\ncache: %s", path, want, got)
				require.Equal(t, http.StatusOK, code, "%s", got)
				require.Empty(t, h.Values("Warning"), "managedFields are kept")
				g, w := normal(t, got), normal(t, want)
				require.Equal(t, w, g, path)
				cont, _ := g.Metadata["continue"].(string)
				if cont == "" {
					return
				}
				u, _ := url.Parse(q)
				v := u.Query()
				v.Del("resourceVersion")
				v.Del("resourceVersionMatch")
				v.Set("continue", cont)
				path = u.Path + "?" + v.Encode()
			}
			t.Fatal("more than 10 pages")
		})
	}
}
