package ratelimit_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// recorder is a Metrics that writes each event as a line.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
}

func (r *recorder) Added(q string)                     { r.add("added %s", q) }
func (r *recorder) Started(q string, d time.Duration)  { r.add("started %s %v", q, d) }
func (r *recorder) Finished(q string, d time.Duration) { r.add("finished %s %v", q, d) }
func (r *recorder) Retried(q string)                   { r.add("retried %s", q) }
func (r *recorder) Unfinished(q string, total, longest time.Duration) {
	r.add("unfinished %s %v %v", q, total, longest)
}

func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

func (r *recorder) count(kind string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		var k string
		fmt.Sscan(e, &k)
		if k == kind {
			n++
		}
	}
	return n
}

func TestMetricsEvents(t *testing.T) {
	m := &recorder{}
	q, c := fakeQueue(t, ratelimit.Config[string]{Name: "pods", Metrics: m})

	q.Add("a")
	q.Add("a") // deduplicated: not an add
	step(t, c, 2*time.Second)
	a := getNow(t, q)
	q.Add("a") // dirty while processing: waiting again, depth +1
	step(t, c, 3*time.Second)
	q.Done(a)
	q.Done(getNow(t, q))
	require.Equal(t, []string{
		"added pods",
		"started pods 2s",
		"added pods",
		"finished pods 3s",
		"started pods 3s", // latency counts from the Add while processing, not from Done
		"finished pods 0s",
	}, m.take())

	q.AddAfter("b", time.Second)
	q.AddRateLimited("c")
	require.Equal(t, []string{"retried pods", "retried pods"}, m.take())

	// Unfinished work is reported when the loop wakes.
	step(t, c, 10*time.Second)
	require.Equal(t, []string{"added pods", "added pods", "unfinished pods 0s 0s"}, m.take(),
		"b and c became ready; nothing was being processed")
	require.Equal(t, "c", getNow(t, q), "the default limiter's 5ms beat b's 1s")
	step(t, c, 10*time.Second)
	require.Equal(t, "b", getNow(t, q))
	step(t, c, 10*time.Second)
	require.Equal(t, []string{
		"started pods 0s", "unfinished pods 10s 10s", // both became ready when the loop woke
		"started pods 10s", "unfinished pods 30s 20s", // c held 20s, b 10s
	}, m.take())
	q.Done("b")
	q.Done("c")
}

// countingClock counts how often the queue reads the time.
type countingClock struct {
	clock.Clock
	mu    sync.Mutex
	reads int
}

func (c *countingClock) Now() time.Time {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Clock.Now()
}

func (c *countingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

func TestNopMetricsSkipsTheClock(t *testing.T) {
	for _, m := range []ratelimit.Metrics{nil, ratelimit.NopMetrics{}} {
		c := &countingClock{Clock: clock.NewFake(time.Unix(0, 0))}
		q := ratelimit.NewQueue(ratelimit.Config[string]{Clock: c, Metrics: m})
		q.Add("a")
		k, _ := q.Get()
		q.Done(k)
		q.ShutDown()
		require.Zero(t, c.reads, "metrics %T", m)
	}
}
