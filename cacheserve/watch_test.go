package cacheserve

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// changes makes five changes upstream: an update, a delete, a create, a
// label change out of app=web and one into it.
func changes(t *testing.T, up *watchtest.Server) {
	t.Helper()
	_, err := up.Update(watchtest.Pods, pod("shop", "web-2", "node-a", map[string]string{"app": "web", "v": "2"}))
	require.NoError(t, err)
	_, err = up.Delete(watchtest.Pods, "blog", "cache-1")
	require.NoError(t, err)
	_, err = up.Create(watchtest.Pods, pod("blog", "new-1", "node-b", map[string]string{"app": "web"}))
	require.NoError(t, err)
	_, err = up.Update(watchtest.Pods, pod("shop", "web-1", "node-a", map[string]string{"app": "db"}))
	require.NoError(t, err)
	_, err = up.Update(watchtest.Pods, pod("shop", "db-1", "node-a", map[string]string{"app": "web"}))
	require.NoError(t, err)
}

// TestWatchReplaysAsUpstream is decision 43: a watch from a version
// replays the history after it in order, without duplicates, as the
// upstream's own watch from that version does, selectors included (an
// object leaving the selection is DELETED at the event's version, one
// entering it ADDED), and so does a watch with sendInitialEvents.
func TestWatchReplaysAsUpstream(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	from := itoa(r.caughtUp(t))
	changes(t, r.up)
	r.caughtUp(t)
	for _, c := range []struct {
		query string
		n     int
	}{
		{"?watch=1&resourceVersion=" + from, 5},
		{"?watch=1&labelSelector=app%3Dweb&resourceVersion=" + from, 4},
		{"?watch=1&fieldSelector=spec.nodeName%3Dnode-b&resourceVersion=" + from, 2},
		{"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=" + from, 7},
		{"?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=app%3Dweb", 5},
		{"?watch=1&resourceVersion=0&allowWatchBookmarks=true&labelSelector=app%3Ddb", 2},
	} {
		t.Run(c.query, func(t *testing.T) {
			path := "/api/v1/pods" + c.query
			got := watch(t, r.local.URL, path)
			want := watch(t, r.up.URL, path)
			require.Equal(t, http.StatusOK, got.status)
			require.Equal(t, want.next(t, c.n), got.next(t, c.n), path)
			// Nothing more: one more change shows whether anything was
			// duplicated or held back.
			select {
			case ev := <-got.events:
				t.Fatalf("unexpected %s", ev)
			default:
			}
		})
	}
}

// TestWatchEnterLeave is decision 43: a watch with a label selector sees
// an object whose labels leave it as DELETED, with the event's version,
// and one whose labels enter it as ADDED.
func TestWatchEnterLeave(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	from := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&labelSelector=app%3Dweb&resourceVersion="+itoa(from))
	_, err := r.up.Update(watchtest.Pods, pod("shop", "web-1", "node-a", map[string]string{"app": "db"}))
	require.NoError(t, err)
	_, err = r.up.Update(watchtest.Pods, pod("shop", "db-1", "node-a", map[string]string{"app": "web"}))
	require.NoError(t, err)
	require.Equal(t, []string{"DELETED web-1 " + itoa(from+1), "ADDED db-1 " + itoa(from+2)}, w.next(t, 2))
}

// TestWatchTooOld is decision 43: a watch from a version older than the
// history gets kube-apiserver's 200 stream with a 410 ERROR event.
func TestWatchTooOld(t *testing.T) {
	r := newRig(t, func(_ *listwatch.Informer, _ *httpwatch.ResourceClient, s *Server) {})
	r.cache.mu.Lock()
	r.cache.History = 2
	r.cache.mu.Unlock()
	seed(t, r.up)
	last := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion=1")
	require.Equal(t, http.StatusOK, w.status)
	require.Equal(t, []string{"ERROR 410 too old resource version: 1 (" + itoa(last-2) + ")"}, w.rest(t))
	// From the floor on, the history replays: the two events it keeps.
	w = watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(last-2))
	require.Equal(t, []string{"ADDED cache-1 " + itoa(last-1), "ADDED agent " + itoa(last)}, w.next(t, 2))
}

// TestWatchTooLarge is decisions 43 and 44: a watch with
// sendInitialEvents or a list from a version the cache has not reached
// waits up to 3 s for it, then gets the "too large" answer with
// Retry-After; a plain watch from there gets the events after it, as
// the real watch cache's does.
func TestWatchTooLarge(t *testing.T) {
	r := newRig(t)
	cur := r.caughtUp(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	opened := make(chan *stream, 1)
	go func() {
		opened <- watch(t, r.local.URL, "/api/v1/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion="+itoa(cur+100))
	}()
	require.NoError(t, r.clock.WaitForWaiters(ctx, 1))
	r.clock.Step(DefaultTooLargeWait)
	require.Equal(t, []string{"ERROR 504 Timeout: Too large resource version: " + itoa(cur+100) + ", current: " + itoa(cur)}, (<-opened).rest(t))

	type answer struct {
		code  int
		retry string
	}
	done := make(chan answer, 1)
	go func() {
		code, h, _ := get(t, r.local.URL, "/api/v1/pods?resourceVersion="+itoa(cur+100)+"&resourceVersionMatch=NotOlderThan")
		done <- answer{code, h.Get("Retry-After")}
	}()
	require.NoError(t, r.clock.WaitForWaiters(ctx, 1))
	r.clock.Step(DefaultTooLargeWait)
	require.Equal(t, answer{http.StatusGatewayTimeout, "1"}, <-done)

	// A plain watch from a version not reached yet gets what follows it.
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(cur+1))
	seed(t, r.up)
	require.Equal(t, []string{"ADDED web-2 " + itoa(cur+2)}, w.next(t, 1))
}

// TestNotSyncedIs429 is decision 43: before the informer's first list
// reaches the cache, lists, gets and watches are answered 429 with
// Retry-After, never with an empty list.
func TestNotSyncedIs429(t *testing.T) {
	up := watchtest.NewServer()
	defer up.Close()
	client, err := httpwatchClient(up.URL)
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	src := client.Resource(watchtest.Pods)
	inf := listwatch.NewInformer(src, 0) // never run
	srv := &Server{Authorize: allowAll}
	_, err = srv.Add(inf, src, zeroResource)
	require.NoError(t, err)
	local := newLocal(t, srv)
	for _, p := range []string{"/api/v1/pods", "/api/v1/namespaces/a/pods/b", "/api/v1/pods?watch=1"} {
		code, h, body := get(t, local, p)
		require.Equal(t, http.StatusTooManyRequests, code, p)
		require.Equal(t, "1", h.Get("Retry-After"), p)
		require.Contains(t, string(body), `"reason":"TooManyRequests"`)
	}
}

// TestRelistEndsWatches is decision 43: a relist upstream at another
// version (after a 410) cannot be bridged event by event: the history
// starts again and every watch ends with a 410, so its client relists
// from the cache; a relist at the version held changes nothing.
func TestRelistEndsWatches(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	cur := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(cur))
	items := r.inf.Lister().Select(everything)
	// The same version again: nothing happens.
	require.NoError(t, r.cache.Replace(items, itoa(cur)))
	_, err := r.up.Delete(watchtest.Pods, "ops", "agent")
	require.NoError(t, err)
	require.Equal(t, []string{"DELETED agent " + itoa(cur+1)}, w.next(t, 1))
	// Another version: the watch ends with a 410, and a new one from
	// before it is too old.
	require.NoError(t, r.cache.Replace(items[:1], itoa(cur+50)))
	require.Equal(t, []string{"ERROR 410 too old resource version: " + itoa(cur+1) + " (" + itoa(cur+50) + ")"}, w.rest(t))
	w = watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(cur))
	require.Equal(t, []string{"ERROR 410 too old resource version: " + itoa(cur) + " (" + itoa(cur+50) + ")"}, w.rest(t))
	code, _, body := get(t, r.local.URL, "/api/v1/pods")
	require.Equal(t, http.StatusOK, code)
	require.Len(t, normal(t, body).Items, 1)
}

// TestBookmarksFollowTheWatcher is decisions 43 and 44: a bookmark
// carries the version the watcher has reached, moved by the upstream's
// own bookmarks too, and the last comes 2 s before the watch's deadline.
func TestBookmarksFollowTheWatcher(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	last := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&allowWatchBookmarks=true&timeoutSeconds=300&labelSelector=app%3Ddb&resourceVersion="+itoa(last))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, r.clock.WaitForWaiters(ctx, 2)) // the bookmark and the timeout
	// A change the selector hides still moves the watcher's version.
	_, err := r.up.Delete(watchtest.Pods, "ops", "agent")
	require.NoError(t, err)
	r.caughtUp(t)
	r.up.SendBookmarks()
	r.clock.Step(DefaultBookmarkEvery)
	require.Equal(t, []string{"BOOKMARK  " + itoa(last+1)}, w.next(t, 1))
	require.NoError(t, r.clock.WaitForWaiters(ctx, 2))
	r.clock.Step(238 * time.Second) // 2 s before the deadline (decision 44)
	require.Equal(t, []string{"BOOKMARK  " + itoa(last+1)}, w.next(t, 1))
	r.clock.Step(2 * time.Second)
	require.Empty(t, w.rest(t))
}

// TestUpstreamExpiryEndsLocalWatches is decision 43: when the upstream
// compacted past the cache's version and the informer relists, every
// local watch ends with a 410, and a new list and watch from the cache
// are served at the upstream's version.
func TestUpstreamExpiryEndsLocalWatches(t *testing.T) {
	r := newRig(t, func(inf *listwatch.Informer, _ *httpwatch.ResourceClient, _ *Server) {
		inf.Logger = slog.New(slog.DiscardHandler) // the closed watches' Warn is not this test's
	})
	seed(t, r.up)
	last := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(last))
	r.up.CloseWatches() // the informer re-watches from last
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, r.up.WaitForWatches(ctx, 1))
	// Changes the cache does not see, then a compaction past its version.
	r.up.CloseWatches()
	_, err := r.up.Create(watchtest.Pods, pod("ops", "late", "node-a", nil))
	require.NoError(t, err)
	_, err = r.up.Delete(watchtest.Pods, "shop", "web-1")
	require.NoError(t, err)
	require.NoError(t, r.up.Compact(r.up.ResourceVersion()))
	now := r.caughtUp(t)
	got := w.rest(t)
	require.NotEmpty(t, got)
	require.Regexp(t, `^ERROR 410 too old resource version: \d+ \(`+itoa(now)+`\)$`, got[len(got)-1])
	code, _, body := get(t, r.local.URL, "/api/v1/pods")
	require.Equal(t, http.StatusOK, code)
	l := normal(t, body)
	require.Equal(t, itoa(now), l.Metadata["resourceVersion"])
	require.Len(t, l.Items, 6)
	w = watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(now))
	_, err = r.up.Delete(watchtest.Pods, "ops", "late")
	require.NoError(t, err)
	require.Equal(t, []string{"DELETED late " + itoa(now+1)}, w.next(t, 1))
}

// A watch of one object by its path (the legacy form client-go still
// sends for a watch of one name) hears that object only (decision 43).
func TestWatchOfOneNameHearsItAlone(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	r.caughtUp(t)
	rv, _ := r.cache.ResourceVersion()
	s := watch(t, r.local.URL, "/api/v1/namespaces/shop/pods/web-2?watch=1&resourceVersion="+itoa(rv))
	for _, name := range []string{"web-1", "web-2"} {
		_, err := r.up.Update(watchtest.Pods, pod("shop", name, "node-c", map[string]string{"app": "web"}))
		require.NoError(t, err)
	}
	got := s.next(t, 1)
	require.Contains(t, got[0], "web-2")
	require.NotContains(t, got[0], "web-1")
}
