package cacheserve

import (
	"context"
	"encoding/json"
	"fmt"
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

// normalList is a list response decoded. Nothing is taken out: an
// object that reached the cache by a watch event (with kind and
// apiVersion) is written as a list's item, without them (decision 44).
type normalList struct {
	Kind, APIVersion string
	Metadata         map[string]any
	Items            []map[string]any
}

func normal(t *testing.T, b []byte) normalList {
	t.Helper()
	var l normalList
	require.NoError(t, json.Unmarshal(b, &l), "%s", b)
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

// TestTableAsUpstream is decision 43: kubectl's Table of a list and of one
// object has the upstream's columns and rows (ages aside: the clocks
// differ), and so do the events of a watch asked for as a Table.
func TestTableAsUpstream(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	r.caughtUp(t)
	type table struct {
		Kind              string
		ColumnDefinitions []struct{ Name string }
		Rows              []struct{ Cells []any }
	}
	read := func(base, path string) (int, table) {
		req, err := http.NewRequest(http.MethodGet, base+path, nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var tb table
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&tb))
		}
		for _, row := range tb.Rows {
			for i, c := range tb.ColumnDefinitions {
				if c.Name == "Age" {
					row.Cells[i] = nil
				}
			}
		}
		return resp.StatusCode, tb
	}
	for _, p := range []string{"/api/v1/pods", "/api/v1/namespaces/shop/pods?labelSelector=app%3Dweb", "/api/v1/namespaces/shop/pods/db-1"} {
		code, got := read(r.local.URL, p)
		require.Equal(t, http.StatusOK, code, p)
		_, want := read(r.up.URL, p)
		require.Equal(t, want, got, p)
		require.Equal(t, "Table", got.Kind)
	}
	// kubectl get --watch: each event a one-row Table, headers first only.
	watchTable := func(base string) []string {
		req, err := http.NewRequest(http.MethodGet, base+"/api/v1/namespaces/shop/pods?watch=1&resourceVersion=0", nil)
		require.NoError(t, err)
		req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		resp, err := http.DefaultClient.Do(req.WithContext(ctx))
		require.NoError(t, err)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		var out []string
		for len(out) < 3 {
			var ev struct {
				Type   string
				Object table
			}
			require.NoError(t, dec.Decode(&ev))
			out = append(out, fmt.Sprintf("%s %s headers=%d rows=%d %v", ev.Type, ev.Object.Kind, len(ev.Object.ColumnDefinitions), len(ev.Object.Rows), ev.Object.Rows[0].Cells[0]))
		}
		return out
	}
	require.Equal(t, watchTable(r.up.URL), watchTable(r.local.URL))
}

// TestExpiredContinueIs410 is decision 43: the pages of a list come from
// the snapshot of its first page while the history spans its version;
// once it does not, continuing is the real server's 410 with a fresh
// token that goes on from the same key at the latest version.
func TestExpiredContinueIs410(t *testing.T) {
	r := newRig(t)
	r.cache.mu.Lock()
	r.cache.History = 2
	r.cache.mu.Unlock()
	seed(t, r.up)
	r.caughtUp(t)
	_, _, body := get(t, r.local.URL, "/api/v1/pods?limit=2")
	first := normal(t, body)
	cont := first.Metadata["continue"].(string)
	// One change: the snapshot is still within the history.
	_, err := r.up.Delete(watchtest.Pods, "shop", "web-2")
	require.NoError(t, err)
	r.caughtUp(t)
	code, _, body := get(t, r.local.URL, "/api/v1/pods?limit=2&continue="+url.QueryEscape(cont))
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Equal(t, first.Metadata["resourceVersion"], normal(t, body).Metadata["resourceVersion"])
	// Two more: it is not.
	for _, n := range []string{"x", "y"} {
		_, err := r.up.Create(watchtest.Pods, pod("zz", n, "node-a", nil))
		require.NoError(t, err)
	}
	r.caughtUp(t)
	code, _, body = get(t, r.local.URL, "/api/v1/pods?limit=2&continue="+url.QueryEscape(cont))
	require.Equal(t, http.StatusGone, code, "%s", body)
	var st struct {
		Reason   string
		Metadata struct{ Continue string }
	}
	require.NoError(t, json.Unmarshal(body, &st))
	require.Equal(t, "Expired", st.Reason)
	code, _, body = get(t, r.local.URL, "/api/v1/pods?limit=100&continue="+url.QueryEscape(st.Metadata.Continue))
	require.Equal(t, http.StatusOK, code, "%s", body)
	var names []string
	for _, it := range normal(t, body).Items {
		names = append(names, it["metadata"].(map[string]any)["name"].(string))
	}
	require.Equal(t, []string{"agent", "db-1", "web-1", "x", "y"}, names, "the rest after blog/web-1, at the latest version")
}

// A list at exactly the version the cache has reached, Exact or
// NotOlderThan, is answered at once: there is nothing to wait for
// (decision 43).
func TestListAtTheVersionReachedAnswersAtOnce(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	r.caughtUp(t)
	rv, _ := r.cache.ResourceVersion()
	for _, match := range []string{"Exact", "NotOlderThan"} {
		code, _, body := get(t, r.local.URL, "/api/v1/namespaces/shop/pods?resourceVersion="+itoa(rv)+"&resourceVersionMatch="+match)
		require.Equal(t, http.StatusOK, code, "%s: %s", match, body)
		require.Len(t, normal(t, body).Items, 3, match)
	}
}

// A GET of an object the cache does not hold is the real server's 404,
// worded as it words it (decision 43).
func TestGetOfAMissingObjectIsTheRealNotFound(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	r.caughtUp(t)
	code, _, body := get(t, r.local.URL, "/api/v1/namespaces/shop/pods/nope")
	require.Equal(t, http.StatusNotFound, code)
	var st struct{ Reason, Message string }
	require.NoError(t, json.Unmarshal(body, &st))
	require.Equal(t, "NotFound", st.Reason)
	require.Equal(t, `pods "nope" not found`, st.Message)
}
