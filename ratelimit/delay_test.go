package ratelimit_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// conformance 84
func TestAddAfterNonPositiveAddsAtOnce(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.AddAfter("zero", 0)
	q.AddAfter("negative", -time.Hour)
	require.Equal(t, 2, q.Len())
	require.Equal(t, 1, c.Waiters(), "only the loop's own timer")
}

// conformance 84
func TestAddAfterReadyAtNowPlusDelayInOrder(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.AddAfter("c", 3*time.Second)
	q.AddAfter("a", time.Second)
	q.AddAfter("b", 2*time.Second)

	step(t, c, time.Second-time.Nanosecond)
	require.Equal(t, 0, q.Len(), "not ready a nanosecond early")
	step(t, c, time.Nanosecond)
	require.Equal(t, 1, q.Len())
	step(t, c, 5*time.Second)
	require.Equal(t, 3, q.Len())
	require.Equal(t, "a", getNow(t, q))
	require.Equal(t, "b", getNow(t, q))
	require.Equal(t, "c", getNow(t, q))
}

// AddAt schedules at the time given, not at a delay from whenever the
// queue reads its clock: a step between the caller's decision and the call
// cannot push the item past its time. Conformance 84.
func TestAddAtReadyAtThatTime(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	due := c.Now().Add(2 * time.Second)
	step(t, c, time.Second) // the clock moves while the caller decides
	q.AddAt("a", due)
	q.AddAt("past", c.Now().Add(-time.Second))
	require.Equal(t, 1, q.Len(), "a time already passed adds at once")
	require.Equal(t, "past", getNow(t, q))
	step(t, c, time.Second-time.Nanosecond)
	require.Equal(t, 0, q.Len(), "not ready a nanosecond early")
	step(t, c, time.Nanosecond)
	require.Equal(t, 1, q.Len(), "ready at the time given")
	require.Equal(t, "a", getNow(t, q))
}

// conformance 84
func TestAddAfterKeepsEarliestTime(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.AddAfter("later-first", 5*time.Second)
	q.AddAfter("later-first", 2*time.Second) // moves earlier
	q.AddAfter("sooner-first", 2*time.Second)
	q.AddAfter("sooner-first", 5*time.Second) // ignored

	step(t, c, 2*time.Second)
	require.Equal(t, 2, q.Len())
	a, b := getNow(t, q), getNow(t, q)
	q.Done(a)
	q.Done(b)
	step(t, c, time.Hour)
	require.Equal(t, 0, q.Len(), "each item was waiting once, at its earliest time")
}

// conformance 84
func TestAddAfterOfWaitingItemIsDeduplicatedWhenReady(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.Add("a")
	q.AddAfter("a", time.Second)
	step(t, c, time.Second)
	require.Equal(t, 1, q.Len(), "ready item already waiting is not queued twice")
}

// conformance 84
func TestAddAfterAfterShutDownIsDropped(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.AddAfter("pending", time.Second)
	q.ShutDown()
	q.AddAfter("late", time.Second)
	q.AddAfter("late-now", 0)
	c.Step(time.Hour)
	require.Equal(t, 0, q.Len(), "pending items are dropped by ShutDown, later ones refused")
	_, shutdown := q.Get()
	require.True(t, shutdown)
}

// conformance 85
func TestLoopWakesAtLeastEveryTenSeconds(t *testing.T) {
	m := &recorder{}
	q, c := fakeQueue(t, ratelimit.Config[string]{Metrics: m})
	q.AddAfter("far", time.Hour)

	for i := 1; i <= 6; i++ {
		step(t, c, 10*time.Second)
		require.Equal(t, i, m.count("unfinished"), "a wake (and a report) every 10s")
	}
	step(t, c, 10*time.Second-time.Nanosecond)
	require.Equal(t, 6, m.count("unfinished"), "no wake before 10s")
	require.Equal(t, 0, q.Len())
	c.Set(time.Unix(0, 0).Add(time.Hour))
	step(t, c, 0)
	require.Equal(t, 1, q.Len())
}

// conformance 85: client-go buffers up to 1000 delayed adds in a channel and
// blocks beyond; here AddAfter writes the heap directly and never blocks, and
// however many items wait there is one goroutine and one timer.
func TestAddAfterNeverBlocksAndUsesOneTimer(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	q := ratelimit.NewQueue(ratelimit.Config[int]{Clock: c})
	defer q.ShutDown()
	const n = 5000
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				q.AddAfter(i, time.Duration(1+i%7)*time.Second)
			}
		})
	}
	testwait.Group(t, &wg, "AddAfter to return (it must never block)")
	require.Equal(t, 1, c.Waiters(), "one timer per queue, not per item")
	step(t, c, 7*time.Second)
	require.Equal(t, n, q.Len())
}

// conformance 85
func TestShutDownStopsTheLoop(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	q.AddAfter("a", time.Second)
	require.Equal(t, 1, c.Waiters())
	q.ShutDown() // returns only after the loop has exited
	require.Equal(t, 0, c.Waiters(), "the loop stopped its timer on the way out")
}

// conformance 90
func TestAddRateLimitedDelaysByLimiter(t *testing.T) {
	lim := &stubLimiter{delay: 3 * time.Second}
	q, c := fakeQueue(t, ratelimit.Config[string]{Limiter: lim})
	q.AddRateLimited("a")
	require.Equal(t, []string{"a"}, lim.whens)
	step(t, c, 3*time.Second-time.Nanosecond)
	require.Equal(t, 0, q.Len())
	step(t, c, time.Nanosecond)
	require.Equal(t, "a", getNow(t, q))

	require.Equal(t, 1, q.NumRequeues("a"))
	q.Forget("a")
	require.Equal(t, []string{"a"}, lim.forgets)
	require.Equal(t, 0, q.NumRequeues("a"))

	// Forget does not finish the item: it is still processing.
	q.Add("a")
	require.Equal(t, 0, q.Len())
	q.Done("a")
	require.Equal(t, 1, q.Len())
}

// conformance 90
func TestAddRateLimitedBacksOffWithExponential(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{
		Limiter: &ratelimit.Exponential[string]{Base: time.Second, Max: time.Minute},
	})
	for i, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		q.AddRateLimited("a")
		require.Equal(t, i+1, q.NumRequeues("a"))
		step(t, c, delay-time.Nanosecond)
		require.Equal(t, 0, q.Len(), "retry %d early", i+1)
		step(t, c, time.Nanosecond)
		q.Done(getNow(t, q))
	}
	q.Forget("a")
	q.AddRateLimited("a")
	step(t, c, time.Second)
	require.Equal(t, 1, q.Len(), "after Forget the delay starts over")
}

// stubLimiter always returns delay and counts its calls.
type stubLimiter struct {
	mu      sync.Mutex
	delay   time.Duration
	whens   []string
	forgets []string
}

func (s *stubLimiter) When(item string) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.whens = append(s.whens, item)
	return s.delay
}

func (s *stubLimiter) Forget(item string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgets = append(s.forgets, item)
	var kept []string
	for _, w := range s.whens {
		if w != item {
			kept = append(kept, w)
		}
	}
	s.whens = kept
}

func (s *stubLimiter) NumRequeues(item string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, w := range s.whens {
		if w == item {
			n++
		}
	}
	return n
}
