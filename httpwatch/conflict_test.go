package httpwatch

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var errConflict = &StatusError{Code: 409, Reason: "Conflict"}

func TestRetryOnConflict(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	r := conflictRetry{steps: 4, initial: time.Second, factor: 2, jitter: 0.5, clock: fake, random: func() float64 { return 0.5 }}
	ctx := context.Background()
	calls := make(chan time.Time, 10)
	done := make(chan error, 1)
	go func() {
		attempts := 0
		done <- r.do(ctx, func(context.Context) error {
			attempts++
			calls <- fake.Now()
			if attempts < 3 {
				return errConflict
			}
			return nil
		})
	}()
	start := testwait.Recv(t, calls, "the first attempt")
	for _, wait := range []time.Duration{1250 * time.Millisecond, 2500 * time.Millisecond} {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		require.NoError(t, fake.WaitForWaiters(wctx, 1))
		cancel()
		// The wait is exact: a nanosecond short leaves the timer pending.
		fake.Step(wait - time.Nanosecond)
		require.Equal(t, 1, fake.Waiters(), "the retry waits %v, not less", wait)
		fake.Step(time.Nanosecond)
		assert.Equal(t, wait, testwait.Recv(t, calls, "the next attempt").Sub(start), "waits double, with jitter")
		start = fake.Now()
	}
	require.NoError(t, testwait.Recv(t, done, "RetryOnConflict to return"), "succeeds on the third attempt")

	// Other errors are returned at once; conflicts give up after Steps.
	n := 0
	other := errors.New("boom")
	assert.ErrorIs(t, r.do(ctx, func(context.Context) error { n++; return other }), other)
	assert.Equal(t, 1, n)
	n = 0
	r.initial = 0
	assert.True(t, IsConflict(r.do(ctx, func(context.Context) error { n++; return errConflict })))
	assert.Equal(t, 4, n)
}

// RetryOnConflict itself is client-go's retry.DefaultRetry: five attempts,
// 10 ms apart, stretched by up to a tenth, on the real clock; run on a
// fake one, those settings make four waits of 10 ms and a half (at the
// random's midpoint) between five attempts.
func TestRetryOnConflictDefaults(t *testing.T) {
	r := onConflict
	assert.Equal(t, 5, r.steps)
	assert.Equal(t, 10*time.Millisecond, r.initial, "attempts 10 ms apart")
	assert.Equal(t, 1.0, r.factor)
	assert.Equal(t, 0.1, r.jitter)
	assert.Equal(t, clock.Real, r.clock)
	fake := clock.NewFake(time.Unix(0, 0))
	r.clock, r.random = fake, func() float64 { return 0.5 }
	done := make(chan error, 1)
	n := 0
	go func() {
		done <- r.do(context.Background(), func(context.Context) error { n++; return errConflict })
	}()
	for range 4 {
		ctx, stop := context.WithTimeout(context.Background(), 10*time.Second)
		require.NoError(t, fake.WaitForWaiters(ctx, 1))
		stop()
		fake.Step(10500 * time.Microsecond) // 10 ms stretched by half its tenth
	}
	err := testwait.Recv(t, done, "RetryOnConflict to return")
	assert.True(t, IsConflict(err))
	assert.Equal(t, 5, n)
}

// A context ended during a wait ends the retries with an error that
// wraps both the context's and the last conflict.
func TestRetryOnConflictCanceled(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	r := conflictRetry{steps: 5, initial: time.Second, factor: 1, clock: fake, random: func() float64 { return 0 }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	n := 0
	go func() { done <- r.do(ctx, func(context.Context) error { n++; return errConflict }) }()
	wctx, stop := context.WithTimeout(ctx, 10*time.Second)
	require.NoError(t, fake.WaitForWaiters(wctx, 1))
	stop()
	cancel()
	err := testwait.Recv(t, done, "RetryOnConflict to return")
	assert.ErrorIs(t, err, context.Canceled)
	assert.True(t, IsConflict(err), "%v", err)
	assert.Equal(t, 1, n)
	assert.Zero(t, fake.Waiters(), "the timer is stopped")
}
