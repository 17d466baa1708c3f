package ratelimit_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// whens calls l.When(item) n times and returns the delays.
func whens(l ratelimit.Limiter[string], item string, n int) []time.Duration {
	var ds []time.Duration
	for range n {
		ds = append(ds, l.When(item))
	}
	return ds
}

const ms = time.Millisecond

// conformance 86
func TestExponential(t *testing.T) {
	tests := []struct {
		name string
		lim  *ratelimit.Exponential[string]
		n    int
		want []time.Duration
	}{
		{"doubles per failure up to the cap", &ratelimit.Exponential[string]{Base: ms, Max: 10 * ms}, 6,
			[]time.Duration{1 * ms, 2 * ms, 4 * ms, 8 * ms, 10 * ms, 10 * ms}},
		{"zero value: 5ms base", &ratelimit.Exponential[string]{}, 3,
			[]time.Duration{5 * ms, 10 * ms, 20 * ms}},
		{"nonsense values mean the defaults", &ratelimit.Exponential[string]{Base: -1, Max: -1}, 2,
			[]time.Duration{5 * ms, 10 * ms}},
		{"cap below base", &ratelimit.Exponential[string]{Base: time.Second, Max: ms}, 2,
			[]time.Duration{ms, ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, whens(tt.lim, "a", tt.n))
			require.Equal(t, tt.n, tt.lim.NumRequeues("a"))
			require.Equal(t, 0, tt.lim.NumRequeues("b"), "failures are counted per item")
			require.Equal(t, tt.want[0], tt.lim.When("b"))
			tt.lim.Forget("a")
			require.Equal(t, 0, tt.lim.NumRequeues("a"))
			require.Equal(t, tt.want[0], tt.lim.When("a"), "Forget starts over")
			require.Equal(t, 1, tt.lim.NumRequeues("b"), "Forget of a leaves b")
		})
	}
}

// conformance 86
func TestExponentialOverflowGivesMax(t *testing.T) {
	for _, max := range []time.Duration{1000 * time.Second, math.MaxInt64} {
		lim := &ratelimit.Exponential[string]{Base: time.Nanosecond, Max: max}
		var last time.Duration
		for i := range 200 {
			d := lim.When("a")
			require.GreaterOrEqual(t, d, last, "call %d went down: overflow", i)
			require.LessOrEqual(t, d, max)
			last = d
		}
		require.Equal(t, max, last)
	}
	def := &ratelimit.Exponential[string]{}
	for range 1000 {
		def.When("a")
	}
	require.Equal(t, 1000*time.Second, def.When("a"), "default cap")
}

// conformance 87
func TestDefaultControllerRateLimiter(t *testing.T) {
	lim := ratelimit.DefaultControllerRateLimiter[string]()
	parts, ok := lim.(ratelimit.MaxOf[string])
	require.True(t, ok, "a MaxOf, got %T", lim)
	require.Len(t, parts, 2)
	exp := parts[0].(*ratelimit.Exponential[string])
	require.Equal(t, 5*ms, exp.Base)
	require.Equal(t, 1000*time.Second, exp.Max)
	bucket := parts[1].(*ratelimit.Bucket[string])
	require.Equal(t, rate.Limit(10), bucket.Limiter.Limit())
	require.Equal(t, 100, bucket.Limiter.Burst())

	require.Equal(t, 5*ms, lim.When("a"))
	require.Equal(t, 10*ms, lim.When("a"))
	require.Equal(t, 2, lim.NumRequeues("a"))
	lim.Forget("a")
	require.Equal(t, 0, lim.NumRequeues("a"))
}

// conformance 87: the queue's default limiter, on the queue's clock. The
// first 100 retries of fresh items take the burst and wait 5ms; the 101st
// waits for the bucket, a tenth of a second.
func TestDefaultControllerRateLimiterInQueue(t *testing.T) {
	q, c := fakeQueue(t, ratelimit.Config[string]{})
	for i := range 101 {
		q.AddRateLimited(fmt.Sprint("item", i))
	}
	step(t, c, 5*ms)
	require.Equal(t, 100, q.Len())
	step(t, c, 100*ms-5*ms-time.Nanosecond)
	require.Equal(t, 100, q.Len())
	step(t, c, time.Nanosecond)
	require.Equal(t, 101, q.Len())
}

// conformance 87
func TestDefaultItemBasedRateLimiter(t *testing.T) {
	lim := ratelimit.DefaultItemBasedRateLimiter[string]()
	exp := lim.(*ratelimit.Exponential[string])
	require.Equal(t, ms, exp.Base)
	require.Equal(t, 1000*time.Second, exp.Max)
	require.Equal(t, []time.Duration{ms, 2 * ms, 4 * ms}, whens(lim, "a", 3))
	for i := range 200 {
		require.Equal(t, ms, lim.When(fmt.Sprint("item", i)), "no limit shared across items")
	}
}

// conformance 88
func TestBucket(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	b := &ratelimit.Bucket[string]{Limiter: rate.NewLimiter(1, 2), Clock: c}
	require.Equal(t, []time.Duration{0, 0, time.Second, 2 * time.Second},
		[]time.Duration{b.When("a"), b.When("b"), b.When("c"), b.When("a")},
		"tokens are shared by all items; each When reserves one")
	c.Step(2 * time.Second)
	require.Equal(t, time.Second, b.When("d"), "reservations already made are kept")
	require.Equal(t, 0, b.NumRequeues("a"))
	b.Forget("a")
	c.Step(time.Hour)
	require.Equal(t, []time.Duration{0, 0, time.Second}, whens(b, "a", 3), "refills to the burst")
}

// conformance 88
func TestBucketZeroValue(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	b := &ratelimit.Bucket[string]{Clock: c}
	for i := range 100 {
		require.Zero(t, b.When("a"), "burst token %d", i)
	}
	require.Equal(t, 100*ms, b.When("a"), "then 10 per second")
	require.Equal(t, 200*ms, b.When("a"))
}

// conformance 88: a bucket that can never grant a token (burst 0) asks for
// an infinite delay; capped by MaxWait it is usable.
func TestBucketThatNeverGrants(t *testing.T) {
	b := &ratelimit.Bucket[string]{Limiter: rate.NewLimiter(1, 0), Clock: clock.NewFake(time.Unix(0, 0))}
	require.Equal(t, rate.InfDuration, b.When("a"))
	capped := ratelimit.MaxWait[string]{Limiter: b, Max: time.Minute}
	require.Equal(t, time.Minute, capped.When("a"))
}

// conformance 89
func TestFastSlow(t *testing.T) {
	lim := &ratelimit.FastSlow[string]{Fast: ms, Slow: time.Second, FastAttempts: 3}
	require.Equal(t, []time.Duration{ms, ms, ms, time.Second, time.Second}, whens(lim, "a", 5))
	require.Equal(t, 5, lim.NumRequeues("a"))
	require.Equal(t, ms, lim.When("b"), "attempts are counted per item")
	lim.Forget("a")
	require.Equal(t, 0, lim.NumRequeues("a"))
	require.Equal(t, ms, lim.When("a"))

	var zero ratelimit.FastSlow[string]
	require.Equal(t, []time.Duration{0, 0}, whens(&zero, "a", 2))
}

// conformance 89
func TestMaxOf(t *testing.T) {
	exp := &ratelimit.Exponential[string]{Base: ms, Max: time.Hour}
	fs := &ratelimit.FastSlow[string]{Fast: 3 * ms, Slow: 10 * ms, FastAttempts: 2}
	lim := ratelimit.MaxOf[string]{exp, fs}
	// exp: 1 2 4 8 16; fast-slow: 3 3 10 10 10
	require.Equal(t, []time.Duration{3 * ms, 3 * ms, 10 * ms, 10 * ms, 16 * ms}, whens(lim, "a", 5))
	require.Equal(t, 5, exp.NumRequeues("a"), "every child saw every failure")
	require.Equal(t, 5, fs.NumRequeues("a"))

	exp.Forget("a")
	require.Equal(t, 5, lim.NumRequeues("a"), "the largest count of the children")
	lim.Forget("a")
	require.Equal(t, 0, exp.NumRequeues("a"))
	require.Equal(t, 0, fs.NumRequeues("a"), "Forget reaches every child")
	require.Equal(t, 0, lim.NumRequeues("a"))

	require.Zero(t, ratelimit.MaxOf[string]{}.When("a"), "empty MaxOf never delays")
}

// conformance 89
func TestMaxWait(t *testing.T) {
	exp := &ratelimit.Exponential[string]{Base: time.Second, Max: time.Hour}
	lim := ratelimit.MaxWait[string]{Limiter: exp, Max: 3 * time.Second}
	require.Equal(t, []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second},
		whens(lim, "a", 4))
	require.Equal(t, 4, lim.NumRequeues("a"))
	lim.Forget("a")
	require.Equal(t, 0, exp.NumRequeues("a"))
	require.Equal(t, time.Second, lim.When("a"))
}
