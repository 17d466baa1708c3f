package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// Every test shuts its queues down; a goroutine left behind fails the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeQueue returns a queue on a fake clock at the Unix epoch, shut down when
// the test ends.
func fakeQueue(t testing.TB, cfg ratelimit.Config[string]) (*ratelimit.Queue[string], *clock.Fake) {
	t.Helper()
	c := clock.NewFake(time.Unix(0, 0))
	cfg.Clock = c
	q := ratelimit.NewQueue(cfg)
	t.Cleanup(q.ShutDown)
	return q, c
}

// step moves the fake clock and returns once the queue's loop is waiting on
// its timer again, so whatever became due has been queued.
func step(t testing.TB, c *clock.Fake, d time.Duration) {
	t.Helper()
	c.Step(d)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, c.WaitForWaiters(ctx, 1), "queue loop did not re-arm its timer")
}

// getNow takes the next item, failing if none is queued.
func getNow[T comparable](t testing.TB, q *ratelimit.Queue[T]) T {
	t.Helper()
	require.Positive(t, q.Len(), "nothing queued")
	item, shutdown := q.Get()
	require.False(t, shutdown)
	return item
}
