package httpwatch

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

func podsClient(t *testing.T, cfg *kubeconfig.Config) (*Client, *ResourceClient) {
	t.Helper()
	c, err := NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c, c.Resource(Resource{Version: "v1", Resource: "pods"})
}

// A server that accepts a watch and never sends headers fails the watch
// after WatchHeaderTimeout instead of hanging it.
func TestWatchHeaderTimeout(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	c, rc := podsClient(t, &kubeconfig.Config{Host: apitest.Silent(t), Clock: clk, Timeout: time.Second})
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
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
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

	w, err := rc.Watch(testwait.Context(t), ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	require.Zero(t, clk.Waiters(), "no timer runs once the headers are in")
	clk.Step(time.Hour)
	close(release)
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, "a", ev.Object.Name())
}

// WatchHeaderTimeout 0 means no bound on the headers: no timer runs while
// a watch waits for them, and only its context ends the wait.
func TestWatchHeaderTimeoutZeroMeansNone(t *testing.T) {
	arrived := make(chan struct{})
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	clk := clock.NewFake(time.Unix(1000, 0))
	c, rc := podsClient(t, &kubeconfig.Config{Host: srv.URL, Clock: clk})
	c.WatchHeaderTimeout = 0

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := rc.Watch(ctx, ListOptions{})
		errc <- err
	}()
	bound := time.NewTimer(10 * time.Second)
	defer bound.Stop()
	select {
	case <-arrived:
	case err := <-errc:
		t.Fatalf("the watch ended before reaching the server: %v", err)
	case <-bound.C:
		t.Fatal("the watch never reached the server")
	}
	require.Zero(t, clk.Waiters(), "no timer bounds the headers")
	clk.Step(24 * time.Hour)
	cancel()
	select {
	case err := <-errc:
		require.ErrorIs(t, err, context.Canceled)
		require.NotErrorIs(t, err, ErrResponseHeaderTimeout)
	case <-bound.C:
		t.Fatal("the watch did not end with its context")
	}
}
