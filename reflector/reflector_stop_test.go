package reflector

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopOnceWatcher is a Watcher whose Stop, like one that closes a channel,
// panics when called twice. It says when the reflector first calls Next.
type stopOnceWatcher struct {
	*scriptWatcher
	stops   atomic.Int32
	entered chan struct{}
	enter   sync.Once
}

func newStopOnceWatcher(ctx context.Context) *stopOnceWatcher {
	sw := newWatcher()
	sw.ctx = ctx // the stream ends with the reflector's context
	return &stopOnceWatcher{scriptWatcher: sw, entered: make(chan struct{})}
}

func (w *stopOnceWatcher) Next() (httpwatch.Event, error) {
	w.enter.Do(func() { close(w.entered) })
	return w.scriptWatcher.Next()
}

func (w *stopOnceWatcher) Stop() {
	if w.stops.Add(1) > 1 {
		panic("watcher stopped twice")
	}
	w.scriptWatcher.Stop()
}

// runCatching runs r until ctx ends and delivers what Run panicked with (nil
// if it returned).
func runCatching(ctx context.Context, r *Reflector) <-chan any {
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		r.Run(ctx)
	}()
	return done
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// Conformance 26: a watch that ends because the reflector's context was
// cancelled is stopped once, not by both the stream step and Run.
func TestReflectorStopsCancelledWatchOnce(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newStopOnceWatcher(ctx)
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil }},
	}
	r, _, _ := newTestReflector(src)
	done := runCatching(ctx, r)
	waitFor(t, w.entered, "the reflector to read the watch")
	cancel()
	assert.Nil(t, waitFor(t, done, "Run to return"))
	assert.EqualValues(t, 1, w.stops.Load())
}

// Conformance 25: a watch stopped by a failed resync is not stopped again
// when the reflector closes it to relist.
func TestReflectorStopsWatchOnceAfterFailedResync(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newStopOnceWatcher(ctx)
	src := &scriptSource{
		pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", ""), page("11", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
			func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil },
			watchOf(newWatcher()),
		},
	}
	r, sink, c := newTestReflector(src)
	sink.resyncErr = errors.New("disk full")
	r.ResyncPeriod = time.Minute
	done := runCatching(ctx, r)
	waitFor(t, w.entered, "the reflector to read the watch")
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1), "the resync timer")

	c.Step(time.Minute) // the resync fails and stops the watch
	require.NoError(t, c.WaitForWaiters(wctx, 2), "the resync timer and the backoff before the relist")
	c.Step(time.Second)
	require.Eventually(t, func() bool { return r.Stats().Lists == 2 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.Nil(t, waitFor(t, done, "Run to return"))
	assert.EqualValues(t, 1, w.stops.Load())
}
