package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quietFor is how long the quiet-watch tests hold their watches: ten
// minutes by default, longer than the longest watch timeout the reflector
// asks for; REALAPI_QUIET shortens it for a run by hand.
func quietFor(t *testing.T) time.Duration {
	d := 10 * time.Minute
	if v := os.Getenv("REALAPI_QUIET"); v != "" {
		var err error
		d, err = time.ParseDuration(v)
		require.NoError(t, err, "REALAPI_QUIET")
	}
	return d
}

// secondAPIServer starts another kube-apiserver on the etcd of the one
// scripts/realapi.sh started, with extra flags, on a port of its own, and
// returns a config for it. It is killed when the test ends. Tests that
// restart the first server do not touch it.
func secondAPIServer(t *testing.T, extra ...string) *kubeconfig.Config {
	t.Helper()
	dir := realapi.Env(t, "REALAPI_DIR")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	certs := t.TempDir()
	var args []string
	for _, a := range strings.Split(read("apiserver.args"), "\n") {
		switch name, _, _ := strings.Cut(a, "="); name {
		case "--secure-port":
			a = "--secure-port=" + strconv.Itoa(port)
		case "--cert-dir":
			a = "--cert-dir=" + certs
		}
		args = append(args, a)
	}
	logf, err := os.Create(filepath.Join(certs, "kube-apiserver.log"))
	require.NoError(t, err)
	cmd := exec.Command(read("apiserver.bin"), append(args, extra...)...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-exited
	})
	cfg := &kubeconfig.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), BearerToken: realapi.Env(t, "REALAPI_TOKEN"),
		CAFile: filepath.Join(certs, "apiserver.crt"), QPS: -1}
	require.Eventually(t, func() bool { _, err := os.Stat(cfg.CAFile); return err == nil }, wait, 100*time.Millisecond, "no serving certificate")
	ready(t, cfg)
	return cfg
}

// bookmarkTimes holds a raw watch with bookmarks open for d and returns
// how long after it opened each bookmark came, the one ending initial
// events left out.
func bookmarkTimes(ctx context.Context, t *testing.T, rc *httpwatch.ResourceClient, d time.Duration) []time.Duration {
	t.Helper()
	w, err := rc.Watch(ctx, httpwatch.ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: int64((d + time.Minute) / time.Second), IdleTimeout: -1})
	require.NoError(t, err)
	opened := time.Now()
	stop := time.AfterFunc(d, w.Stop)
	defer stop.Stop()
	var at []time.Duration
	for {
		ev, err := w.Next()
		if err != nil {
			return at
		}
		if ev.Type == httpwatch.Bookmark && ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() != "true" {
			at = append(at, time.Since(opened).Round(100*time.Millisecond))
		}
	}
}

// decision 36: what kube-apiserver sends a quiet watch that allows
// bookmarks, with its watch cache on (the default) and off, and that the
// reflector's WatchIdleTimeout restarts such a watch at most once, with
// the cache off, where the client gives up hoping for bookmarks, and
// never relists:
// for ten minutes, longer than its longest watch timeout, an informer of
// an empty namespace logs nothing above Debug, lists once, and opens no
// more watches than the server's own timeouts end.
func TestQuietWatch(t *testing.T) {
	d := quietFor(t)
	for _, tc := range []struct {
		name      string
		flags     []string
		bookmarks bool
	}{
		{"cache-on", nil, true},
		{"cache-off", []string{"--watch-cache=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := secondAPIServer(t, tc.flags...)
			c, err := httpwatch.NewClient(cfg)
			require.NoError(t, err)
			t.Cleanup(c.CloseIdleConnections)
			ns := namespace(t, c)
			rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})

			inf := listwatch.NewInformer(rc, 0)
			log := &testlog.Log{}
			inf.Logger = slog.New(log)
			var errs []error
			var mu sync.Mutex
			inf.OnError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
			run(t, inf)

			ctx, cancel := context.WithTimeout(context.Background(), d+2*time.Minute)
			defer cancel()
			at := bookmarkTimes(ctx, t, rc, d)
			t.Logf("%s: bookmarks to a quiet watch at %v after it opened", tc.name, at)
			if tc.bookmarks {
				require.GreaterOrEqual(t, len(at), 2, "the watch cache sends quiet watches bookmarks")
				assert.Less(t, at[0], reflector.DefaultWatchIdleTimeout, "the first bookmark comes within the idle bound")
				for i := 1; i < len(at); i++ {
					assert.LessOrEqual(t, at[i]-at[i-1], reflector.DefaultWatchIdleTimeout/2, "bookmarks %d and %d: the bound is armed", i, i+1)
				}
			} else {
				assert.Empty(t, at, "without a watch cache no bookmark comes to a quiet watch")
			}

			st := inf.Stats()
			t.Logf("%s: informer stats after %v: %+v", tc.name, d, st)
			assert.Empty(t, log.Above(), "a quiet watch is no failure")
			mu.Lock()
			defer mu.Unlock()
			relists := st.Lists - 1
			// The client hopes from its first watch that the server sends
			// bookmarks: with the cache on, the first comes in time, and
			// no watch is restarted; with it off, the first watch is, once
			// (httpwatch.ErrNoBookmarks, at Debug), and no other after it.
			var silent int64
			if tc.bookmarks {
				assert.Zero(t, relists, "no relist: the bookmarks move the version")
			} else {
				silent = 1
				// Nothing moves a quiet watch's version without bookmarks,
				// so a watch the server ended after etcd compacted (every
				// five minutes) cannot resume: a 410 and a relist, as for
				// client-go. Those, and the one hope given up, are the
				// only errors.
				var gone, hoped int
				for _, err := range errs {
					switch {
					case httpwatch.IsGone(err):
						gone++
					case errors.Is(err, httpwatch.ErrNoBookmarks):
						hoped++
					default:
						t.Errorf("only the compacted version and the hope given up: %v", err)
					}
				}
				assert.Equal(t, int(relists), gone, "one error per relist: %v", errs)
				assert.Equal(t, 1, hoped, "the hope is given up once: %v", errs)
			}
			assert.Equal(t, silent, st.WatchEnds.Silent, "no needless restart after the first")
			// The server ends each watch after 5 to 10 minutes; a relist
			// opens one more, and so does the one restart.
			maxWatches := 1 + int64(d/(5*time.Minute)) + relists + silent
			assert.LessOrEqual(t, st.Watches, maxWatches, "no watch restarted but by the server's timeout")
		})
	}
}
