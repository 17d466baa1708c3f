package cacheserve

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// TestRefusesWhatItCannotAnswerWhole is decision 43: a request the cache
// cannot answer completely is refused with a Status that says why, never
// answered in part: a write, a resource not cached, a namespace or a
// selector wider than the informer's, a GET of an object a selective
// cache lacks.
func TestRefusesWhatItCannotAnswerWhole(t *testing.T) {
	r := newRigOf(t, listwatch.Selector{Field: "spec.nodeName=node-a", Label: "app"})
	seed(t, r.up)
	r.up.SendBookmarks() // the cache's version moves by bookmarks when nothing it holds changed
	r.caughtUp(t)
	for _, c := range []struct {
		method, path string
		code         int
		says         string
	}{
		{"POST", "/api/v1/namespaces/shop/pods", 405, "serves reads only"},
		{"DELETE", "/api/v1/namespaces/shop/pods/web-1", 405, "serves reads only"},
		{"GET", "/api/v1/configmaps", 400, "configmaps.v1 is not cached here"},
		{"GET", "/api/v1/namespaces/shop/pods/web-1/log", 400, "subresource"},
		{"GET", "/api/v1/pods", 400, `labelSelector \"app\"`},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a", 400, `labelSelector \"app\"`},
		{"GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b&labelSelector=app", 400, `fieldSelector \"spec.nodeName=node-a\"`},
		{"GET", "/api/v1/pods?watch=1&labelSelector=app", 400, `fieldSelector \"spec.nodeName=node-a\"`},
		{"GET", "/api/v1/namespaces/shop/pods/web-2", 400, "cannot answer completely"},
		{"GET", "/api/v1/pods?fieldSelector=status.hostIP%3Dx,spec.nodeName%3Dnode-a&labelSelector=app", 400, "field label not supported: status.hostIP"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		req, err := http.NewRequestWithContext(ctx, c.method, r.local.URL+c.path, strings.NewReader("{}"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		require.Equal(t, c.code, resp.StatusCode, "%s %s: %s", c.method, c.path, body)
		require.Contains(t, string(body), c.says, "%s %s", c.method, c.path)
		require.Contains(t, string(body), `"kind":"Status"`)
	}
	// What the informer's selectors imply is answered, narrower too.
	code, _, body := get(t, r.local.URL, "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a&labelSelector=app,app!%3Ddb")
	require.Equal(t, http.StatusOK, code, "%s", body)
	require.Len(t, normal(t, body).Items, 2) // shop/web-1 and blog/cache-1
	code, _, _ = get(t, r.local.URL, "/api/v1/namespaces/shop/pods/db-1")
	require.Equal(t, http.StatusOK, code)
}

// TestNotWholeIsRefusedOrSaid is decision 43: a source whose objects are
// cut is not served; one that drops managedFields is served with a
// Warning on every response that says so.
func TestNotWholeIsRefusedOrSaid(t *testing.T) {
	client, err := httpwatchClient("http://127.0.0.1:1")
	require.NoError(t, err)
	for _, cut := range []func(*httpwatch.ResourceClient){
		func(c *httpwatch.ResourceClient) { c.MetadataOnly = true },
		func(c *httpwatch.ResourceClient) { c.Projection = &raw.Projection{} },
		func(c *httpwatch.ResourceClient) {
			c.Transform = func(o *raw.Object) (*raw.Object, error) { return o, nil }
		},
	} {
		src := client.Resource(watchtest.Pods)
		cut(src)
		_, err := (&Server{}).Add(listwatch.NewInformer(src, 0), src, zeroResource)
		require.ErrorIs(t, err, ErrNotWhole)
	}
	// A warm start is served: TestWarmStartServesOffline (decision 45).

	r := newRig(t, func(_ *listwatch.Informer, src *httpwatch.ResourceClient, _ *Server) { src.KeepManagedFields = false })
	seed(t, r.up)
	r.caughtUp(t)
	for _, p := range []string{"/api/v1/pods", "/api/v1/namespaces/shop/pods/web-1", "/api/v1/namespaces/shop/pods/nope"} {
		_, h, _ := get(t, r.local.URL, p)
		require.Equal(t, []string{managedFieldsWarning}, h.Values("Warning"), p)
	}
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1")
	require.Len(t, w.next(t, 6), 6)
}

// TestDefaultDeny is decision 43: with no Authorize, a request over TCP is
// refused (a User-Agent changes nothing), and one through the unix socket
// of ListenUnix, whose mode is the authorization, is served.
func TestDefaultDeny(t *testing.T) {
	r := newRig(t)
	r.srv.Authorize = nil
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.local.URL+"/api/v1/pods", nil)
	require.NoError(t, err)
	req.Header.Set("User-Agent", "kubelet/v1.37.2")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "%s", body)

	sock := filepath.Join(t.TempDir(), "pods.sock")
	l, err := ListenUnix(sock, 0o600)
	require.NoError(t, err)
	fi, err := os.Stat(sock)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	sctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- r.srv.Serve(sctx, l) }()
	defer func() {
		stop()
		require.NoError(t, <-served)
	}()
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	defer hc.CloseIdleConnections()
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, "http://local/api/v1/pods", nil)
	require.NoError(t, err)
	resp, err = hc.Do(req)
	require.NoError(t, err)
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)

	// A file that is not a socket is not replaced.
	plain := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(plain, nil, 0o600))
	_, err = ListenUnix(plain, 0o600)
	require.Error(t, err)
}

// TestOfflineKeepsServing is decision 43: with the upstream gone, lists
// and gets are answered from the cache at the last version known, a watch
// stays open and gets its bookmarks at that version, and a new watch from
// that version is served.
func TestOfflineKeepsServing(t *testing.T) {
	r := newRig(t, func(inf *listwatch.Informer, _ *httpwatch.ResourceClient, _ *Server) {
		inf.Logger = slog.New(slog.DiscardHandler) // the outage's Warn is not this test's
	})
	seed(t, r.up)
	last := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&allowWatchBookmarks=true&resourceVersion="+itoa(last))
	r.up.CloseWatches()
	r.up.Close()

	code, _, body := get(t, r.local.URL, "/api/v1/pods")
	require.Equal(t, http.StatusOK, code)
	l := normal(t, body)
	require.Equal(t, itoa(last), l.Metadata["resourceVersion"])
	require.Len(t, l.Items, 6)

	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, r.clock.WaitForWaiters(ctx, 1))
	r.clock.Step(DefaultBookmarkEvery)
	require.Equal(t, []string{"BOOKMARK  " + itoa(last)}, w.next(t, 1))
	r.clock.Step(DefaultBookmarkEvery)
	require.Equal(t, []string{"BOOKMARK  " + itoa(last)}, w.next(t, 1))

	w2 := watch(t, r.local.URL, "/api/v1/namespaces/blog/pods?watch=1&resourceVersion="+itoa(last-3))
	require.Equal(t, []string{"ADDED web-1 " + itoa(last-2), "ADDED cache-1 " + itoa(last-1)}, w2.next(t, 2))
}

// TestLocalInformersShareOneUpstreamWatch is decision 43: listwatch
// informers pointed at the served cache sync from it and follow every
// change, while the upstream serves one watch, the cache's own.
func TestLocalInformersShareOneUpstreamWatch(t *testing.T) {
	r := newRig(t)
	seed(t, r.up)
	r.caughtUp(t)
	local, err := httpwatch.NewClient(&kubeconfig.Config{Host: r.local.URL})
	require.NoError(t, err)
	defer local.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	type run struct {
		inf  *listwatch.Informer
		seen chan string
		done chan struct{}
	}
	var runs []run
	for i := range 5 {
		src := local.Resource(watchtest.Pods)
		inf := listwatch.NewInformer(src, 0)
		inf.Reflector.PagedList = i%2 == 1 // both ways of syncing
		seen := make(chan string, 100)
		_, err := inf.AddEventHandler(listwatch.HandlerFuncs{
			UpdateFunc: func(_, o *listwatch.Object) { seen <- "update " + listwatch.Key(o) + " " + o.ResourceVersion() },
			DeleteFunc: func(o *listwatch.Object, _ bool) { seen <- "delete " + listwatch.Key(o) },
		})
		require.NoError(t, err)
		done := make(chan struct{})
		go func() { defer close(done); inf.Run(ctx) }()
		runs = append(runs, run{inf, seen, done})
	}
	defer func() {
		cancel()
		for _, ru := range runs {
			<-ru.done
		}
	}()
	for _, ru := range runs {
		require.NoError(t, ru.inf.Wait(ctx))
		require.Len(t, ru.inf.Lister().Select(everything), 6)
	}
	up, err := r.up.Update(watchtest.Pods, pod("shop", "web-1", "node-b", map[string]string{"app": "web"}))
	require.NoError(t, err)
	_, err = r.up.Delete(watchtest.Pods, "ops", "agent")
	require.NoError(t, err)
	for _, ru := range runs {
		for _, want := range []string{"update shop/web-1 " + up.ResourceVersion(), "delete ops/agent"} {
			select {
			case got := <-ru.seen:
				require.Equal(t, want, got)
			case <-ctx.Done():
				t.Fatalf("a local informer did not see %q", want)
			}
		}
	}
	require.Equal(t, 1, r.up.OpenWatches(), "one upstream watch for every local informer")
}
