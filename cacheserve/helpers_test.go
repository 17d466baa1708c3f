package cacheserve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/selector"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every blocking step of a test.
const wait = 10 * time.Second

// rig is an upstream (watchtest), an informer of its pods mirrored into a
// Server, and that server on a local httptest listener.
type rig struct {
	up     *watchtest.Server
	client *httpwatch.Client
	inf    *listwatch.Informer
	srv    *Server
	cache  *Cache
	local  *httptest.Server
	clock  *clock.Fake
}

type rigOption func(*listwatch.Informer, *httpwatch.ResourceClient, *Server)

func allowAll(*http.Request) error { return nil }

// newRig starts everything and waits for the cache's first sync; the
// test's cleanup stops it all.
func newRig(t *testing.T, opts ...rigOption) *rig {
	t.Helper()
	r := &rig{up: watchtest.NewServer(), clock: clock.NewFake(time.Unix(1_800_000_000, 0))}
	t.Cleanup(r.up.Close)
	var err error
	r.client, err = httpwatch.NewClient(&kubeconfig.Config{Host: r.up.URL})
	require.NoError(t, err)
	t.Cleanup(r.client.CloseIdleConnections)
	src := r.client.Resource(watchtest.Pods)
	src.KeepManagedFields = true
	r.inf = listwatch.NewInformer(src, 0)
	r.srv = &Server{Authorize: allowAll, Clock: r.clock}
	for _, o := range opts {
		o(r.inf, src, r.srv)
	}
	r.cache, err = r.srv.Add(r.inf, src, apiserve.APIResource{})
	require.NoError(t, err)
	r.local = httptest.NewServer(r.srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.inf.Run(ctx) }()
	t.Cleanup(func() {
		r.local.CloseClientConnections()
		r.local.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Error("informer did not stop")
		}
	})
	wctx, wcancel := context.WithTimeout(context.Background(), wait)
	defer wcancel()
	require.NoError(t, r.inf.Wait(wctx))
	r.caughtUp(t)
	return r
}

// caughtUp waits until the cache has reached the upstream's version.
func (r *rig) caughtUp(t *testing.T) int64 {
	t.Helper()
	want, err := parseRV(r.up.ResourceVersion())
	require.NoError(t, err)
	waitRV(t, r.cache, want)
	return want
}

func waitRV(t *testing.T, c *Cache, want int64) {
	t.Helper()
	deadline := time.After(wait)
	for {
		c.mu.RLock()
		cur, moved := c.rv, c.moved
		c.mu.RUnlock()
		if cur >= want {
			return
		}
		select {
		case <-moved:
		case <-deadline:
			t.Fatalf("cache at %d, want %d within %v", cur, want, wait)
		}
	}
}

func pod(ns, name, node string, labels map[string]string) string {
	l, _ := json.Marshal(labels)
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":%s},"spec":{"nodeName":%q}}`, name, ns, l, node)
}

// get makes a GET and returns the status, headers and body.
func get(t *testing.T, base, path string) (int, http.Header, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, b
}

// watchEvent is one decoded watch frame.
type watchEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (e watchEvent) String() string {
	var m struct {
		Metadata struct {
			Name, ResourceVersion string
			Annotations           map[string]string
		}
		Code    int
		Message string
	}
	_ = json.Unmarshal(e.Object, &m)
	if e.Type == "ERROR" {
		return fmt.Sprintf("ERROR %d %s", m.Code, m.Message)
	}
	if e.Type == "BOOKMARK" && m.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
		return "BOOKMARK " + m.Metadata.ResourceVersion + " initial-events-end"
	}
	return e.Type + " " + m.Metadata.Name + " " + m.Metadata.ResourceVersion
}

// stream is an open watch.
type stream struct {
	status int
	events chan watchEvent
	cancel func()
}

// watch opens a watch and reads its events on a goroutine the test's
// cleanup ends.
func watch(t *testing.T, base, path string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	s := &stream{status: resp.StatusCode, events: make(chan watchEvent, 10_000), cancel: cancel}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev watchEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				s.events <- ev
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return s
}

// next reads n events.
func (s *stream) next(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	timeout := time.After(wait)
	for len(out) < n {
		select {
		case ev, ok := <-s.events:
			if !ok {
				t.Fatalf("watch ended after %q, want %d events", out, n)
			}
			out = append(out, ev.String())
		case <-timeout:
			t.Fatalf("watch gave %q within %v, want %d events", out, wait, n)
		}
	}
	return out
}

// ended reports the events left until the stream ends.
func (s *stream) rest(t *testing.T) []string {
	t.Helper()
	var out []string
	timeout := time.After(wait)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return out
			}
			out = append(out, ev.String())
		case <-timeout:
			t.Fatalf("watch did not end within %v; gave %q", wait, out)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

var (
	zeroResource apiserve.APIResource
	everything   = selector.Everything()
)

func httpwatchClient(host string) (*httpwatch.Client, error) {
	return httpwatch.NewClient(&kubeconfig.Config{Host: host})
}

func newLocal(t *testing.T, h http.Handler) string {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(func() {
		s.CloseClientConnections()
		s.Close()
	})
	return s.URL
}
