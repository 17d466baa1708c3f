package ratelimit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// decision 15: the shared bucket is charged for every retry, as client-go
// charges it. A key that keeps failing spends tokens although its own
// exponential delay already holds it back, so a fresh key waits behind it
// once the burst is gone. Forget on success is what keeps a key from
// becoming hot.
func TestHotKeySpendsTheSharedBucket(t *testing.T) {
	c := clock.NewFake(time.Unix(0, 0))
	lim := ratelimit.MaxOf[string]{
		&ratelimit.Exponential[string]{Base: 5 * time.Millisecond, Max: 1000 * time.Second},
		&ratelimit.Bucket[string]{Limiter: rate.NewLimiter(10, 100), Clock: c},
	}
	for range 100 {
		lim.When("hot")
	}
	require.Equal(t, 100*time.Millisecond, lim.When("fresh"), "the burst went to the hot key")

	lim.Forget("hot")
	require.Zero(t, lim.NumRequeues("hot"), "Forget restarts the key's own backoff")
	require.Equal(t, 200*time.Millisecond, lim.When("hot"), "but spent tokens stay spent")
}
