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
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testwait"
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

// A watch that waits longer than its bound for a byte ends with
// ErrWatchIdle (decision 36), which the reflector resumes from: without
// bookmarks its IdleTimeout, and with no IdleTimeout the watch's own
// TimeoutSeconds plus 30 s; a watch that hears something before its bound
// goes on.
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
			require.ErrorContains(t, err, "nothing from the server for "+tc.limit.String())
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

// pipeWatch is a watch of c with opts whose stream is what the test writes
// to the pipe: a write returns once the watch has read it.
func pipeWatch(t *testing.T, c *Client, opts ListOptions) (Watcher, *io.PipeWriter) {
	pr, pw := io.Pipe()
	w := newWatch(c, pr, func() {}, "/api/v1/pods", c.Resource(Resource{Version: "v1", Resource: "pods"}).decoder(), opts)
	t.Cleanup(w.Stop)
	return w, pw
}

type nextResult struct {
	ev  Event
	err error
}

// nextOf calls w.Next on a goroutine of its own.
func nextOf(w Watcher) <-chan nextResult {
	ch := make(chan nextResult, 1)
	go func() {
		ev, err := w.Next()
		ch <- nextResult{ev, err}
	}()
	return ch
}

const (
	addedPod    = `{"type":"ADDED","object":` + testPod + "}\n"
	bookmark    = `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"2"}}}` + "\n"
	endBookmark = `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"2","annotations":{"k8s.io/initial-events-end":"true"}}}}` + "\n"
)

// decision 36: over HTTP/1.1 nothing pings, so a watch that allows
// bookmarks is held to its IdleTimeout while its server is taken to send
// them: a Client hopes so of its server from its first watch, learns it
// for good from a bookmark in time, and gives the hope up once, when a
// hopeful watch heard none before its bound (ErrNoBookmarks, not
// ErrWatchIdle: that may be all the server does), for the watch's timeout
// plus 30 s until a bookmark comes in time again.
func TestWatchArmingIsLearnedPerClient(t *testing.T) {
	tight := ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: 300, IdleTimeout: 150 * time.Second}
	// watch opens a watch of c with opts, reads the stream written, each
	// frame after the fake time given, and returns the watch, now
	// waiting for the server, and the result of that wait.
	type frame struct {
		after time.Duration
		text  string
	}
	watch := func(t *testing.T, c *Client, clk *clock.Fake, opts ListOptions, frames ...frame) <-chan nextResult {
		t.Helper()
		w, pw := pipeWatch(t, c, opts)
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		for _, f := range append([]frame{{0, addedPod}}, frames...) {
			got := nextOf(w)
			if f.after > 0 {
				require.NoError(t, clk.WaitForWaiters(ctx, 1))
				clk.Step(f.after)
			}
			_, err := io.WriteString(pw, f.text)
			require.NoError(t, err)
			require.NoError(t, testwait.Recv(t, got, "the frame").err)
		}
		waiting := nextOf(w)
		require.NoError(t, clk.WaitForWaiters(ctx, 1), "the read waits for the server")
		return waiting
	}
	// endsAt steps the clock to just short of limit, where the watch
	// waiting must go on, then to limit, where it ends as silent.
	// said is the bound the error names, when not limit; "hoped" for the
	// watch that gives the hope up.
	endsAt := func(t *testing.T, clk *clock.Fake, waiting <-chan nextResult, limit time.Duration, said ...string) {
		t.Helper()
		clk.Step(limit - time.Second)
		select {
		case r := <-waiting:
			t.Fatalf("ended before %v: %v", limit, r.err)
		default:
		}
		clk.Step(time.Second)
		err := testwait.Recv(t, waiting, "the silent watch to end").err
		require.True(t, IsProbableEOF(err), "the watch resumes: %v", err)
		bound := limit.String()
		if len(said) > 0 && said[0] != "hoped" {
			bound = said[0]
		}
		if len(said) > 0 && said[0] == "hoped" {
			// Only the watch that gives the hope up: the server may
			// send none, or the connection went silent.
			require.ErrorIs(t, err, ErrNoBookmarks)
			require.NotErrorIs(t, err, ErrWatchIdle)
			require.ErrorContains(t, err, "no bookmark from the server within "+bound+" of the watch's start")
			return
		}
		require.ErrorIs(t, err, ErrWatchIdle)
		require.ErrorContains(t, err, "nothing from the server for "+bound)
	}

	t.Run("a new client hopes, and gives the hope up once", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		endsAt(t, clk, watch(t, c, clk, tight), 150*time.Second, "hoped")
		require.Equal(t, bookmarksNone, c.bookmarks.Load(), "no bookmark before the bound")
		endsAt(t, clk, watch(t, c, clk, tight), 330*time.Second)
		require.Equal(t, bookmarksNone, c.bookmarks.Load())
	})
	t.Run("every watch opened in hope that heard none says so", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		first, second := watch(t, c, clk, tight), watch(t, c, clk, tight)
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		require.NoError(t, clk.WaitForWaiters(ctx, 2), "both wait for the server")
		clk.Step(150 * time.Second)
		for _, w := range []<-chan nextResult{first, second} {
			require.ErrorIs(t, testwait.Recv(t, w, "the watch to end").err, ErrNoBookmarks)
		}
	})
	t.Run("a watch opened in hope, once another has heard a bookmark, was silent", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		waiting := watch(t, c, clk, tight)
		c.bookmarks.Store(bookmarksSent)
		endsAt(t, clk, waiting, 150*time.Second)
	})
	t.Run("a bookmark in time holds every watch to the bound from then on", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		c.bookmarks.Store(bookmarksNone)
		waiting := watch(t, c, clk, tight, frame{100 * time.Second, bookmark})
		require.Equal(t, bookmarksSent, c.bookmarks.Load())
		clk.Step(150 * time.Second) // the watch itself, from its bookmark
		require.ErrorIs(t, testwait.Recv(t, waiting, "the silent watch to end").err, ErrWatchIdle)
		for range 2 { // and the next ones from their start, bookmarks or not
			endsAt(t, clk, watch(t, c, clk, tight), 150*time.Second)
			require.Equal(t, bookmarksSent, c.bookmarks.Load(), "no second fallback")
		}
	})
	t.Run("a bookmark within the bound of the previous one shows it too", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		c.bookmarks.Store(bookmarksNone)
		watch(t, c, clk, tight, frame{200 * time.Second, bookmark}, frame{150 * time.Second, bookmark})
		require.Equal(t, bookmarksSent, c.bookmarks.Load())
	})
	t.Run("a watch shown bookmarks while its read waits is held to the bound from that read's start", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		c.bookmarks.Store(bookmarksNone)
		w, pw := pipeWatch(t, c, tight)
		got := nextOf(w)
		_, err := io.WriteString(pw, addedPod)
		require.NoError(t, err)
		require.NoError(t, testwait.Recv(t, got, "the first event").err)
		waiting := nextOf(w)
		require.NoError(t, clk.WaitForWaiters(testwait.Context(t), 1), "the read waits, to the loose bound")
		clk.Step(100 * time.Second)
		// As the consumer would on a bookmark read ahead of this read.
		dog := w.(*streamWatcher).dog
		dog.bookmark(Event{Type: Bookmark})
		require.Equal(t, bookmarksSent, c.bookmarks.Load())
		require.Eventually(t, func() bool { return len(dog.wake) == 0 }, testwait.Timeout, time.Millisecond, "the watchdog looks again")
		endsAt(t, clk, waiting, 50*time.Second, "2m30s")
	})
	t.Run("a hopeful watch that heard a late bookmark keeps the hope", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		// An event at 100 s keeps the watch alive; its first bookmark
		// comes 200 s after its opening: late, but the server sends them.
		waiting := watch(t, c, clk, tight, frame{100 * time.Second, addedPod}, frame{100 * time.Second, bookmark})
		require.Equal(t, bookmarksHoped, c.bookmarks.Load())
		endsAt(t, clk, waiting, 150*time.Second)
		require.Equal(t, bookmarksHoped, c.bookmarks.Load())
	})
	for _, tc := range []struct {
		name  string
		frame frame
	}{
		{"a later bookmark shows nothing (etcd's progress, without a watch cache)", frame{151 * time.Second, bookmark}},
		{"nor does the bookmark ending a watch-list's initial events", frame{time.Second, endBookmark}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, clk := fakeClockClient(t, "http://server.invalid")
			c.bookmarks.Store(bookmarksNone)
			endsAt(t, clk, watch(t, c, clk, tight, tc.frame), 330*time.Second)
			require.Equal(t, bookmarksNone, c.bookmarks.Load())
		})
	}
	t.Run("no IdleTimeout: the watch's own bound, and nothing learned", func(t *testing.T) {
		c, clk := fakeClockClient(t, "http://server.invalid")
		loose := tight
		loose.IdleTimeout = 0
		endsAt(t, clk, watch(t, c, clk, loose, frame{time.Second, bookmark}), 330*time.Second)
		require.Equal(t, bookmarksHoped, c.bookmarks.Load())
	})
}

// decision 36: only a read that waits for the server counts. A consumer
// that stops taking events holds the framing goroutine on its hand-off,
// not in a read, so however long it stops, the watch is not silent.
func TestWatchSlowConsumerIsNotSilence(t *testing.T) {
	c, clk := fakeClockClient(t, "http://server.invalid")
	w, pw := pipeWatch(t, c, ListOptions{IdleTimeout: time.Minute})
	got := nextOf(w)
	_, err := io.WriteString(pw, addedPod)
	require.NoError(t, err)
	require.NoError(t, testwait.Recv(t, got, "the first event").err)
	// The consumer stops: the watch reads ahead until its hand-off is
	// full (each write here is one read), then reads no more.
	for range framedAhead + 1 {
		_, err := io.WriteString(pw, addedPod)
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return clk.Waiters() == 0 }, testwait.Timeout, time.Millisecond,
		"no read waits: the watchdog's timer is stopped")
	clk.Step(10 * time.Minute)
	for i := range framedAhead + 1 {
		r := testwait.Recv(t, nextOf(w), "an event read ahead")
		require.NoError(t, r.err, "event %d", i+2)
	}
	got = nextOf(w)
	_, err = io.WriteString(pw, addedPod)
	require.NoError(t, err, "the stream is open")
	require.NoError(t, testwait.Recv(t, got, "the next event").err)
}

// decision 36: the time a consumer holds the watch's hand-off full is not
// the server's silence, even when the bound changes meanwhile. A bookmark
// in time tightens the bound of a watch that opened loose and wakes the
// watchdog; with no read waiting it must not count from the last read
// that returned long ago (which would end the watch 10 s later as idle).
func TestWatchBoundTightenedWhileNoReadWaits(t *testing.T) {
	c, clk := fakeClockClient(t, "http://server.invalid")
	c.bookmarks.Store(bookmarksNone) // the watch opens with the loose bound
	w, pw := pipeWatch(t, c, ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: 300, IdleTimeout: time.Minute})
	write := func(s string) {
		t.Helper()
		_, err := io.WriteString(pw, s)
		require.NoError(t, err)
	}
	got := nextOf(w)
	write(addedPod)
	require.NoError(t, testwait.Recv(t, got, "the first event").err)
	// One read holding an event, the bookmark and another; then reads
	// until the hand-off is full and the framing goroutine waits on it.
	write(addedPod + bookmark + addedPod)
	write(addedPod)
	write(addedPod)
	r := testwait.Recv(t, nextOf(w), "the event before the bookmark")
	require.NoError(t, r.err)
	write(addedPod) // the read that taking it let begin
	require.Eventually(t, func() bool { return clk.Waiters() == 0 }, testwait.Timeout, time.Millisecond,
		"no read waits: the watchdog's timer is stopped")

	clk.Step(50 * time.Second)
	r = testwait.Recv(t, nextOf(w), "the bookmark")
	require.NoError(t, r.err)
	require.Equal(t, Bookmark, r.ev.Type)
	require.Equal(t, bookmarksSent, c.bookmarks.Load(), "a bookmark in time: the bound tightens")
	clk.Step(20 * time.Second)
	for i := range 4 {
		r := testwait.Recv(t, nextOf(w), "an event read ahead")
		require.NoError(t, r.err, "event %d after the bookmark", i+1)
	}
	got = nextOf(w)
	write(addedPod)
	require.NoError(t, testwait.Recv(t, got, "the next event").err, "the watch is open")
}
