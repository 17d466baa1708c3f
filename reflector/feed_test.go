package reflector

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// deafWatcher ignores every context: only Stop ends a blocked Next, as the
// Watcher contract allows. entered is closed when Next first blocks.
type deafWatcher struct {
	entered    chan struct{}
	stopped    chan struct{}
	stops      atomic.Int32
	beforeWait func()
}

// NotifyRead makes Next call fn before it blocks, which it does at once.
func (w *deafWatcher) NotifyRead(fn func()) { w.beforeWait = fn }

func (w *deafWatcher) Next() (httpwatch.Event, error) {
	if w.beforeWait != nil {
		w.beforeWait()
	}
	close(w.entered)
	<-w.stopped
	return httpwatch.Event{}, context.Canceled
}

func (w *deafWatcher) Stop() {
	if w.stops.Add(1) == 1 {
		close(w.stopped)
	}
}

// A watch read directly by the loop (no resync, no watch-list) must still
// end when Run's context does, even from a watcher that only honours Stop,
// and it is stopped exactly once.
func TestReflectorDirectWatchEndsWithRun(t *testing.T) {
	w := &deafWatcher{entered: make(chan struct{}), stopped: make(chan struct{})}
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil }},
	}
	r, _, _ := newTestReflector(src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	select {
	case <-w.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the reflector never read the watch")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	assert.Equal(t, int32(1), w.stops.Load(), "Stop calls")
}

// With a resync period, a quiet watch must not hold off the resync: the
// loop reads through a reader goroutine so it can also hear the alarm.
func TestReflectorFeedModeFollowsDeadlines(t *testing.T) {
	r, _, _ := newTestReflector(&scriptSource{})
	for _, tc := range []struct {
		name    string
		resync  time.Duration
		initial bool
		direct  bool
	}{
		{name: "no deadline", direct: true},
		{name: "resync period", resync: time.Minute},
		{name: "watch-list", initial: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r.ResyncPeriod = tc.resync
			s := r.initialState()
			ctx, cancel := context.WithCancel(context.Background())
			r.opened(ctx, cancel, &s, newWatcher(), false, tc.initial)
			defer s.closeWatch()
			require.NotNil(t, s.feed)
			_, direct := s.feed.(*directFeed)
			assert.Equal(t, tc.direct, direct)
		})
	}
}

// endless hands out the same event for ever, counting its Nexts, until
// Stop.
type endless struct {
	ev      httpwatch.Event
	nexts   atomic.Int64
	stopped chan struct{}
	once    sync.Once
}

func (w *endless) Next() (httpwatch.Event, error) {
	select {
	case <-w.stopped:
		return httpwatch.Event{}, context.Canceled
	default:
	}
	w.nexts.Add(1)
	return w.ev, nil
}
func (w *endless) Stop()             { w.once.Do(func() { close(w.stopped) }) }
func (w *endless) NotifyRead(func()) {}

// A reader reads ahead of the loop by feedAhead events and no more: a
// slow sink holds at most that many events of a fast stream (decision
// 35). The count never passes the bound, so a reader past it is seen.
func TestReadAheadStopsAtItsBound(t *testing.T) {
	w := &endless{ev: httpwatch.Event{Type: httpwatch.Modified, Object: obj("a", "1")}, stopped: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	f := newFeed(ctx, cancel, w, false, nil, nil)
	defer f.close()
	require.Eventually(t, func() bool { return w.nexts.Load() >= feedAhead }, 10*time.Second, time.Millisecond)
	require.EqualValues(t, feedAhead, w.nexts.Load(), "read past the bound")
	rep, ok := f.next(ctx, nil)
	require.True(t, ok)
	require.Equal(t, httpwatch.Modified, rep.ev.Type)
	require.Eventually(t, func() bool { return w.nexts.Load() >= 2*feedAhead }, 10*time.Second, time.Millisecond,
		"the loop took the queue: the reader reads on")
}
