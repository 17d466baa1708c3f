package httpwatch

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
)

// silentServer accepts connections and never answers on them.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

func podsClient(t *testing.T, cfg *kubeconfig.Config) (*Client, *ResourceClient) {
	t.Helper()
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c, c.Resource(Resource{Version: "v1", Resource: "pods"})
}

// A server that accepts a watch and never sends headers fails the watch
// after WatchHeaderTimeout instead of hanging it (issue 16, item 4).
func TestWatchHeaderTimeout(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	c, rc := podsClient(t, &kubeconfig.Config{Host: silentServer(t), Clock: clk, Timeout: time.Second})
	c.WatchHeaderTimeout = 5 * time.Second

	errc := make(chan error, 1)
	go func() {
		_, err := rc.Watch(context.Background(), ListOptions{})
		errc <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 1), "the watch waits for headers on the client's clock")
	clk.Step(5 * time.Second)
	select {
	case err := <-errc:
		require.ErrorIs(t, err, ErrResponseHeaderTimeout)
		require.ErrorContains(t, err, "WATCH /api/v1/pods")
		require.False(t, IsProbableEOF(err), "not a quiet end of stream: the caller must hear of it")
	case <-ctx.Done():
		t.Fatal("the watch still waits for headers")
	}
}

// Once the headers are in, a watch lives as long as the server keeps it.
func TestWatchBodyHasNoTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, `{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","resourceVersion":"2"}}}`+"\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	clk := clock.NewFake(time.Unix(1000, 0))
	c, rc := podsClient(t, &kubeconfig.Config{Host: srv.URL, Clock: clk})
	c.WatchHeaderTimeout = 5 * time.Second

	w, err := rc.Watch(context.Background(), ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	require.Zero(t, clk.Waiters(), "no timer runs once the headers are in")
	clk.Step(time.Hour)
	close(release)
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, "a", ev.Object.Name())
}

// The reflector hears of the timeout through OnError (issue 16, item 4).
func TestReflectorReportsWatchHeaderTimeout(t *testing.T) {
	silent := silentServer(t)
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "" {
			// Hand the watch to a server that never answers.
			http.Redirect(w, r, silent+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			return
		}
		io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	})
	clk := clock.NewFake(time.Unix(1000, 0))
	_, rc := podsClient(t, &kubeconfig.Config{Host: srv.URL, Clock: clk})

	r, sink, _ := newTestReflector(nil)
	r.Source = rc
	errc := make(chan error, 1)
	r.OnError = func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, clk.WaitForWaiters(wctx, 1))
	require.Equal(t, []string{"replace 0@1"}, sink.log())
	clk.Step(DefaultWatchHeaderTimeout)
	select {
	case err := <-errc:
		var se *SyncError
		require.True(t, errors.As(err, &se))
		require.Equal(t, "watch start", se.Op)
		require.ErrorIs(t, err, ErrResponseHeaderTimeout)
	case <-wctx.Done():
		t.Fatal("no error reported")
	}
}
