package reflector

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision 36: a watch on which the server has shown that it sends
// bookmarks (one within WatchIdleTimeout of the watch's opening), and which then hears
// nothing for WatchIdleTimeout while the reflector waits, is stopped,
// said once at Warn, and resumed from the last bookmark's version without
// a relist. A watch on which no such showing came is left alone however
// long it is quiet: its own timeout ends it.
func TestReflectorRestartsSilentWatch(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []watchStep
		restart bool
	}{
		{"shown", []watchStep{ev(httpwatch.Bookmark, obj("", "11")), ev(httpwatch.Bookmark, obj("", "12"))}, true},
		{"not shown", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := newWatcher(tc.steps...)
			src := &scriptSource{
				pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(first), watchOf(newWatcher())},
			}
			r, logs, clk := loggedReflector(src)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { r.Run(ctx); close(done) }()
			defer func() { cancel(); testwait.Recv(t, done, "Run to return") }()

			if !tc.restart {
				require.Eventually(t, func() bool { return r.Stats().Watches == 1 }, testwait.Timeout, time.Millisecond)
				assert.Zero(t, clk.Waiters(), "nothing watches over a watch never shown to get bookmarks: its own timeout ends it")
				assert.False(t, stopped(first))
				assert.Empty(t, logs.Above())
				return
			}
			require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "12" }, testwait.Timeout, time.Millisecond)
			// Step a quarter of the limit at a time, each once the watchdog
			// waits again, until it has stopped the watch (at most one
			// eighth more for a look that came before the reader waited).
			for i := 0; r.Stats().Watches < 2; i++ {
				require.Less(t, i, 10, "the silent watch was not stopped")
				require.Eventually(t, func() bool { return clk.Waiters() == 1 || r.Stats().Watches == 2 },
					testwait.Timeout, time.Millisecond, "the watchdog waits")
				if clk.Waiters() == 1 {
					clk.Step(DefaultWatchIdleTimeout / 8)
				}
			}
			require.Eventually(t, func() bool { return r.Stats().Watches == 2 }, testwait.Timeout, time.Millisecond)
			src.mu.Lock()
			assert.Len(t, src.listOpts, 1, "no relist")
			assert.Equal(t, "12", src.watchOpts[1].ResourceVersion, "resumed from the last bookmark")
			src.mu.Unlock()
			lines := logs.Above()
			require.Len(t, lines, 1)
			assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: watch failed"), lines[0])
			assert.Contains(t, lines[0], "nothing from the server for 2m30s")
		})
	}
}

// blockingSink holds every Add until release is closed.
type blockingSink struct {
	recordSink
	entered chan struct{}
	release chan struct{}
}

func (s *blockingSink) Add(o *raw.Object) error {
	close(s.entered)
	<-s.release
	return s.recordSink.Add(o)
}

// waitingWatcher is a scriptWatcher that, once its steps are taken, waits
// for each next event on a channel, announcing the wait as a watcher of
// the network does (NotifyRead).
type waitingWatcher struct {
	*scriptWatcher
	more chan httpwatch.Event
}

func (w *waitingWatcher) Next() (httpwatch.Event, error) {
	if len(w.steps) > 0 {
		return w.scriptWatcher.Next()
	}
	if w.beforeWait != nil {
		w.beforeWait()
	}
	select {
	case ev := <-w.more:
		return ev, nil
	case <-w.stopped:
		return httpwatch.Event{}, io.EOF
	}
}

// decision 36: time the reflector spends in a slow sink is not the
// server's silence: however long the sink holds an event, which came
// after a wait for the server, the watch is not stopped.
func TestReflectorSlowSinkIsNotSilence(t *testing.T) {
	first := &waitingWatcher{newWatcher(ev(httpwatch.Bookmark, obj("", "11")), ev(httpwatch.Bookmark, obj("", "12"))), make(chan httpwatch.Event)}
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return first, nil }},
	}
	r, logs, clk := loggedReflector(src)
	sink := &blockingSink{entered: make(chan struct{}), release: make(chan struct{})}
	r.Sink = sink
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return") }()

	wctx, wcancel := context.WithTimeout(ctx, testwait.Timeout)
	defer wcancel()
	require.NoError(t, clk.WaitForWaiters(wctx, 1), "the bookmarks armed the watchdog")
	select {
	case first.more <- httpwatch.Event{Type: httpwatch.Added, Object: obj("a", "13")}: // after a wait
	case <-wctx.Done():
		t.Fatal("the reflector never waited for the next event")
	}
	testwait.Recv(t, sink.entered, "the sink to be handed the event")
	for range 16 {
		require.NoError(t, clk.WaitForWaiters(wctx, 1), "the watchdog waits")
		clk.Step(DefaultWatchIdleTimeout / 8)
	}
	assert.False(t, stopped(first.scriptWatcher), "a watch held back by its sink is not silent")
	close(sink.release)
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == "13" }, testwait.Timeout, time.Millisecond)
	assert.Empty(t, logs.Above())
}

// decision 36: the watchdog stops a watch whose reader has waited exactly
// WatchIdleTimeout with nothing coming, looked at every eighth of it: not
// a look sooner, not a look later.
func TestSilenceFiresAtItsLimit(t *testing.T) {
	r, _, clk := newTestReflector(&scriptSource{})
	w := newWatcher()
	s := r.watchSilence(w, false)
	require.NotNil(t, s)
	defer s.stop()
	s.mark.Store(1) // a reader waits in its first Next
	s.arm()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	for i := range 7 {
		require.NoError(t, clk.WaitForWaiters(ctx, 1), "look %d", i+1)
		clk.Step(DefaultWatchIdleTimeout / 8)
	}
	require.NoError(t, clk.WaitForWaiters(ctx, 1), "the watchdog waits for its eighth look")
	assert.False(t, stopped(w), "seven eighths of the limit is not silence")
	clk.Step(DefaultWatchIdleTimeout / 8)
	require.Eventually(t, func() bool { return stopped(w) }, testwait.Timeout, time.Millisecond, "stopped at the limit")
	assert.True(t, s.fired.Load())
}
