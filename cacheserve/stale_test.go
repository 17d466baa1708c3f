package cacheserve

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	snap "github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

func quiet(inf *listwatch.Informer, _ *httpwatch.ResourceClient, _ *Server) {
	inf.Logger = slog.New(slog.DiscardHandler) // the outage's Warn is not these tests'
}

// eventually waits, bounded, for cond.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	require.Eventually(t, cond, wait, 5*time.Millisecond, what)
}

// TestStaleWarningWhileUnreachable is decision 45: once an informer fails
// to watch, every response (lists, discovery, watches, refusals) carries
// kube-apiserver's Warning form saying since when the API server has not
// been heard from, and Stats says so, until the informer hears it again.
func TestStaleWarningWhileUnreachable(t *testing.T) {
	r := newRig(t, quiet)
	seed(t, r.up)
	r.caughtUp(t)
	require.False(t, r.srv.Stats().Stale)
	_, h, _ := get(t, r.local.URL, "/api/v1/pods")
	require.Empty(t, h.Values("Warning"))

	heard := r.srv.Stats().LastHeard
	require.Equal(t, r.clock.Now(), heard)
	r.up.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable, Verbs: []string{"watch"}})
	r.up.CloseWatches()
	eventually(t, func() bool { return r.srv.Stats().Stale }, "stale once the watch failed")
	want := fmt.Sprintf(`299 - "listwatch cache: the API server has not been heard from since %s; what is served may be stale"`,
		heard.UTC().Format(time.RFC3339))
	for _, p := range []string{"/api/v1/pods", "/api", "/apis", "/version", "/api/v1/configmaps"} {
		_, h, _ := get(t, r.local.URL, p)
		require.Equal(t, []string{want}, h.Values("Warning"), p)
	}
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1")
	require.Equal(t, http.StatusOK, w.status)

	// Heard again: an event after the watch resumed.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, r.up.WaitForWatches(ctx, 1)) // the cache's own, resumed
	_, err := r.up.Create(watchtest.Pods, pod("ops", "late", "node-a", nil))
	require.NoError(t, err)
	eventually(t, func() bool { return !r.srv.Stats().Stale }, "current once heard again")
	_, h, _ = get(t, r.local.URL, "/api/v1/pods")
	require.Empty(t, h.Values("Warning"))
}

// servedBy is a Server serving an informer that never runs, whose Mirror
// (the guard) a test drives by hand, as a reflector would.
func servedBy(t *testing.T) (*Server, *listwatch.Informer, string) {
	t.Helper()
	client, err := httpwatchClient("http://127.0.0.1:1")
	require.NoError(t, err)
	src := client.Resource(watchtest.Pods)
	src.KeepManagedFields = true
	inf := listwatch.NewInformer(src, 0)
	srv := &Server{Authorize: allowAll}
	_, err = srv.Add(inf, src, zeroResource)
	require.NoError(t, err)
	return srv, inf, newLocal(t, srv)
}

func podAt(t *testing.T, name string, rv int) *raw.Object {
	t.Helper()
	o, err := raw.NewObject(fmt.Appendf(nil, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","resourceVersion":"%d"}}`, name, rv))
	require.NoError(t, err)
	return o
}

func listNames(t *testing.T, base string) (string, []string) {
	t.Helper()
	code, _, body := get(t, base, "/api/v1/pods")
	require.Equal(t, http.StatusOK, code, "%s", body)
	l := normal(t, body)
	var names []string
	for _, it := range l.Items {
		names = append(names, it["metadata"].(map[string]any)["name"].(string))
	}
	return l.Metadata["resourceVersion"].(string), names
}

// TestVersionsNeverGoBackwards is decision 45: a list from the API server
// at a lower resourceVersion than one served (a server restored from a
// backup) is held: the cache goes on serving its own state at its own
// version, local watches stay open, until the API server passes that
// version; then its state replaces the cache's and every local watch ends
// with a 410, so that clients relist above any version they saw.
func TestVersionsNeverGoBackwards(t *testing.T) {
	srv, inf, base := servedBy(t)
	m := inf.Mirror
	p := m.(interface{ Progress(string) })
	require.NoError(t, m.Replace([]*raw.Object{podAt(t, "a", 8), podAt(t, "b", 10)}, "10"))
	w := watch(t, base, "/api/v1/pods?watch=1&resourceVersion=10")

	require.NoError(t, m.Replace([]*raw.Object{podAt(t, "a", 3)}, "5")) // behind
	require.NoError(t, m.Add(podAt(t, "c", 7)))
	p.Progress("9")
	rv, names := listNames(t, base)
	require.Equal(t, "10", rv)
	require.Equal(t, []string{"a", "b"}, names)
	require.Equal(t, int64(1), srv.Stats().HeldRelists)
	_, h, _ := get(t, base, "/api/v1/pods")
	require.Equal(t, []string{`299 - "listwatch cache: the API server went back to a resourceVersion below 10, which this cache served; serving its own state until the API server passes it"`},
		h.Values("Warning"))

	p.Progress("10") // reaches 10, does not pass it: still held
	rv, names = listNames(t, base)
	require.Equal(t, "10", rv)
	require.Equal(t, []string{"a", "b"}, names)

	require.NoError(t, m.Update(podAt(t, "a", 12))) // passes 10
	rv, names = listNames(t, base)
	require.Equal(t, "12", rv)
	require.Equal(t, []string{"a", "c"}, names)
	got := w.rest(t)
	require.Equal(t, []string{"ERROR 410 too old resource version: 10 (12)"}, got, "no invented event, then the 410")

	// A list at or above the served version goes through at once.
	require.NoError(t, m.Replace([]*raw.Object{podAt(t, "d", 13)}, "13"))
	rv, names = listNames(t, base)
	require.Equal(t, "13", rv)
	require.Equal(t, []string{"d"}, names)
	// A relist at the version served (the same state) is not held.
	require.NoError(t, m.Replace([]*raw.Object{podAt(t, "d", 13)}, "13"))
	require.Equal(t, int64(1), srv.Stats().HeldRelists)
	_, h, _ = get(t, base, "/api/v1/pods")
	require.NotContains(t, h.Get("Warning"), "went back")

	// Not holding, a bookmark moves the version; holding, one that passes
	// the version served releases the held state.
	p.Progress("14")
	rv, names = listNames(t, base)
	require.Equal(t, "14", rv)
	require.Equal(t, []string{"d"}, names)
	require.NoError(t, m.Replace([]*raw.Object{podAt(t, "f", 6)}, "6"))
	rv, names = listNames(t, base)
	require.Equal(t, "14", rv)
	require.Equal(t, []string{"d"}, names)
	p.Progress("15")
	rv, names = listNames(t, base)
	require.Equal(t, "15", rv)
	require.Equal(t, []string{"f"}, names)
	require.Equal(t, int64(2), srv.Stats().HeldRelists)
}

// TestUpstreamRelistInventsNoDeletes is decision 45: when the API server
// compacted past the cache's version and the informer relists, a local
// watch ends with the 410 alone: no DELETED for what went meanwhile (its
// client learns of it from its relist).
func TestUpstreamRelistInventsNoDeletes(t *testing.T) {
	r := newRig(t, quiet)
	seed(t, r.up)
	last := r.caughtUp(t)
	w := watch(t, r.local.URL, "/api/v1/pods?watch=1&resourceVersion="+itoa(last))
	r.up.CloseWatches()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, r.up.WaitForWatches(ctx, 1))
	r.up.CloseWatches()
	_, err := r.up.Delete(watchtest.Pods, "shop", "web-1")
	require.NoError(t, err)
	require.NoError(t, r.up.Compact(r.up.ResourceVersion()))
	now := r.caughtUp(t)
	require.Equal(t, []string{"ERROR 410 too old resource version: " + itoa(last) + " (" + itoa(now) + ")"}, w.rest(t))
}

// snapshotOf saves the snapshot of an informer of n pods in dir, then
// stops its API server: what a node cache restarts from, offline.
func snapshotOf(tb testing.TB, n int) (dir, host, rv string) {
	tb.Helper()
	up := watchtest.NewServer()
	defer up.Close()
	dir = tb.TempDir()
	for i := range n {
		_, err := up.Create(watchtest.Pods, pod("ns", fmt.Sprintf("p-%05d", i), "node-a", nil))
		require.NoError(tb, err)
	}
	inf, _, stop := runWarm(tb, dir, up.URL)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(tb, inf.Wait(ctx))
	stop() // saves the snapshot
	return dir, up.URL, up.ResourceVersion()
}

// runWarm runs an informer of host's pods that keeps its snapshot in dir,
// served by a Server; stop ends it.
func runWarm(tb testing.TB, dir, host string) (*listwatch.Informer, *Server, func()) {
	tb.Helper()
	client, err := httpwatchClient(host)
	require.NoError(tb, err)
	src := client.Resource(watchtest.Pods)
	src.KeepManagedFields = true
	inf := listwatch.NewInformer(src, 0)
	inf.Snapshot = snap.Options{Dir: dir}
	inf.Logger = slog.New(slog.DiscardHandler)
	srv := &Server{Authorize: allowAll}
	_, err = srv.Add(inf, src, zeroResource)
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	return inf, srv, func() { cancel(); <-done; client.CloseIdleConnections() }
}

// synced waits, bounded, until the server's cache of pods has synced.
func synced(tb testing.TB, srv *Server) {
	tb.Helper()
	c := srv.byRes[resID("", "v1", "pods")].cache
	deadline := time.After(wait)
	for {
		c.mu.RLock()
		ok, moved := c.synced, c.moved
		c.mu.RUnlock()
		if ok {
			return
		}
		select {
		case <-moved:
		case <-deadline:
			tb.Fatalf("not synced within %v", wait)
		}
	}
}

// TestWarmStartServesOffline is decision 45: a node cache restarted from
// its snapshot while the API server is down serves the snapshot's state
// at its version at once (BenchmarkWarmStartServesOffline measures how
// soon), with the Warning that the API server has not confirmed it.
func TestWarmStartServesOffline(t *testing.T) {
	dir, host, want := snapshotOf(t, 50)
	_, srv, stop := runWarm(t, dir, host)
	defer stop()
	synced(t, srv)
	base := newLocal(t, srv)
	rv, names := listNames(t, base)
	require.Equal(t, want, rv)
	require.Len(t, names, 50)
	_, h, _ := get(t, base, "/api/v1/pods")
	require.Len(t, h.Values("Warning"), 1)
	require.True(t, strings.Contains(h.Get("Warning"), "from a snapshot the API server has not confirmed yet") ||
		strings.Contains(h.Get("Warning"), "has not been heard from since this cache started"), h.Get("Warning"))
	require.True(t, srv.Stats().Stale)
}

// BenchmarkWarmStartServesOffline measures a node cache's restart from a
// snapshot of 110 pods (a node's most, by kubelet's default) and of
// 10,000, with its API server down: from Run to its first list served.
func BenchmarkWarmStartServesOffline(b *testing.B) {
	for _, n := range []int{110, 10_000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			dir, host, _ := snapshotOf(b, n)
			for b.Loop() {
				_, srv, stop := runWarm(b, dir, host)
				synced(b, srv)
				rec := httptest.NewRecorder()
				srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/pods?resourceVersion=0", nil))
				if rec.Code != http.StatusOK {
					b.Fatalf("list: %d %s", rec.Code, rec.Body)
				}
				b.StopTimer()
				stop()
				b.StartTimer()
			}
		})
	}
}

// TestStaleOnlyOnUpstreamFailures is decision 45: a server is stale only
// once an informer failed to list or watch: not before it has heard
// anything, not for a routine failure (a watch cut and resumed), nor for
// the cache's own (Sink, Resync); the Warning says "since this cache
// started" when nothing was heard before the failure; a change before the
// informer synced is no hearing. The informer's own OnError is still
// called.
func TestStaleOnlyOnUpstreamFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		stale bool
	}{
		{"list", &reflector.SyncError{Op: reflector.OpList, Err: io.EOF}, true},
		{"watch", &reflector.SyncError{Op: reflector.OpWatch, Err: io.EOF}, true},
		{"routine", &reflector.SyncError{Op: reflector.OpWatch, Err: io.EOF, Routine: true}, false},
		{"sink", &reflector.SyncError{Op: reflector.OpSink, Err: io.EOF}, false},
		{"resync", &reflector.SyncError{Op: reflector.OpResync, Err: io.EOF}, false},
		{"not a sync error", io.EOF, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var seen []error
			client, err := httpwatchClient("http://127.0.0.1:1")
			require.NoError(t, err)
			src := client.Resource(watchtest.Pods)
			inf := listwatch.NewInformer(src, 0)
			inf.OnError = func(err error) { seen = append(seen, err) }
			srv := &Server{Authorize: allowAll}
			_, err = srv.Add(inf, src, zeroResource)
			require.NoError(t, err)
			require.False(t, srv.Stats().Stale, "nothing failed yet")

			inf.OnError(tc.err)
			require.Equal(t, []error{tc.err}, seen)
			require.Equal(t, tc.stale, srv.Stats().Stale)
			if tc.stale {
				stale, warning := srv.stale()
				require.True(t, stale)
				require.Contains(t, warning, "not been heard from since this cache started")
				require.NoError(t, inf.Mirror.Add(podAt(t, "a", 3))) // not synced: no hearing
				require.True(t, srv.Stats().Stale)
				require.True(t, srv.Stats().LastHeard.IsZero())
				require.NoError(t, inf.Mirror.Replace([]*raw.Object{podAt(t, "a", 4)}, "4")) // a list (no snapshot) is
				require.False(t, srv.Stats().LastHeard.IsZero())
				_, warning = srv.stale()
				require.NotContains(t, warning, "not been heard from")
			}
		})
	}
}
