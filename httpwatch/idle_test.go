package httpwatch

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// quietServer answers a watch with one event, then holds the stream open
// without a byte more until send is given an event to write.
func quietServer(t *testing.T) (url string, send chan<- string) {
	ch := make(chan string)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"type":"ADDED","object":%s}`+"\n", testPod)
		w.(http.Flusher).Flush()
		for {
			select {
			case ev := <-ch:
				fmt.Fprintln(w, ev)
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL, ch
}

func fakeClockClient(t *testing.T, url string) (*Client, *clock.Fake) {
	clk := clock.NewFake(time.Unix(1000, 0))
	c, err := NewClient(&kubeconfig.Config{Host: url, QPS: -1, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c, clk
}

// A watch that waits longer than its IdleTimeout for a byte ends with
// ErrWatchIdle (decision 36), which the reflector resumes from; with no
// IdleTimeout the bound is the watch's own TimeoutSeconds plus 30 s, and a
// watch that hears something before its bound goes on.
func TestWatchIdleTimeoutEndsSilentWatch(t *testing.T) {
	for _, tc := range []struct {
		name  string
		opts  ListOptions
		limit time.Duration
	}{
		{"IdleTimeout", ListOptions{IdleTimeout: time.Minute, TimeoutSeconds: 600}, time.Minute},
		{"TimeoutSeconds plus grace", ListOptions{TimeoutSeconds: 60}, 90 * time.Second},
		{"neither", ListOptions{}, time.Hour + 30*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url, send := quietServer(t)
			c, clk := fakeClockClient(t, url)
			w, err := c.Resource(Resource{Version: "v1", Resource: "pods"}).Watch(context.Background(), tc.opts)
			require.NoError(t, err)
			defer w.Stop()
			_, err = w.Next()
			require.NoError(t, err)

			done := make(chan error, 1)
			next := func() {
				go func() {
					_, err := w.Next()
					done <- err
				}()
			}
			ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
			defer cancel()
			next()
			// Just short of the limit, a byte comes: the watch goes on, and
			// the silence is counted again from there.
			require.NoError(t, clk.WaitForWaiters(ctx, 1))
			clk.Step(tc.limit - time.Second)
			send <- fmt.Sprintf(`{"type":"MODIFIED","object":%s}`, testPod)
			require.NoError(t, testwait.Recv(t, done, "the event sent before the limit"))

			next()
			require.NoError(t, clk.WaitForWaiters(ctx, 1))
			clk.Step(tc.limit - time.Second)
			select {
			case err := <-done:
				t.Fatalf("the watch ended before its limit: %v", err)
			default:
			}
			clk.Step(time.Second)
			err = testwait.Recv(t, done, "the silent watch to end at its limit")
			require.ErrorIs(t, err, ErrWatchIdle)
			require.ErrorContains(t, err, "no byte from the server for "+tc.limit.String())
			require.True(t, IsProbableEOF(err), "a silent watch resumes: %v", err)
		})
	}
}

// A negative IdleTimeout sets no bound: no timer waits on the stream.
func TestWatchIdleTimeoutOff(t *testing.T) {
	url, _ := quietServer(t)
	c, clk := fakeClockClient(t, url)
	w, err := c.Resource(Resource{Version: "v1", Resource: "pods"}).Watch(context.Background(), ListOptions{IdleTimeout: -1})
	require.NoError(t, err)
	defer w.Stop()
	_, err = w.Next()
	require.NoError(t, err)
	require.Zero(t, clk.Waiters())
}

// The idle watchdog runs only while the stream is read: a watch stopped
// before its first Next, or read to its end, leaves no goroutine behind.
func TestWatchIdleWatchdogLivesWithTheReads(t *testing.T) {
	url, _ := quietServer(t)
	c, _ := fakeClockClient(t, url)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rc := c.Resource(Resource{Version: "v1", Resource: "pods"})
	w, err := rc.Watch(context.Background(), ListOptions{IdleTimeout: time.Minute})
	require.NoError(t, err)
	w.Stop()
	_, err = w.Next()
	require.ErrorIs(t, err, io.EOF)

	w, err = rc.Watch(context.Background(), ListOptions{IdleTimeout: time.Minute})
	require.NoError(t, err)
	_, err = w.Next()
	require.NoError(t, err)
	w.Stop()
	c.CloseIdleConnections()
}

// closeCounter is a transport that counts CloseIdleConnections.
type closeCounter struct {
	http.RoundTripper
	closes atomic.Int32
}

func (c *closeCounter) CloseIdleConnections() { c.closes.Add(1) }

// A watch found silent (decision 36) drops the client's idle connections
// too: they went through the same path, and may be as silent.
func TestWatchIdleDropsIdleConnections(t *testing.T) {
	url, _ := quietServer(t)
	tr := &closeCounter{RoundTripper: http.DefaultTransport}
	clk := clock.NewFake(time.Unix(1000, 0))
	c, err := NewClient(&kubeconfig.Config{Host: url, QPS: -1, Clock: clk, Transport: tr})
	require.NoError(t, err)
	w, err := c.Resource(Resource{Version: "v1", Resource: "pods"}).Watch(context.Background(), ListOptions{IdleTimeout: time.Minute})
	require.NoError(t, err)
	defer w.Stop()
	_, err = w.Next()
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { _, err := w.Next(); done <- err }()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 1))
	require.Zero(t, tr.closes.Load())
	clk.Step(time.Minute)
	require.ErrorIs(t, testwait.Recv(t, done, "the silent watch to end"), ErrWatchIdle)
	require.EqualValues(t, 1, tr.closes.Load())
}
