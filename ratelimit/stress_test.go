package ratelimit_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// Eight workers, 100,000 items, random re-adds of any item (often one being
// processed) and rate-limited retries with tiny real delays. Every item must
// reach success, and no item may be held by two workers at once. The
// per-item attempt counters are plain ints: the race detector sees them
// touched without a lock of their own, so it too would notice two workers
// holding the same item.
func TestStress(t *testing.T) {
	const (
		items      = 100_000
		workers    = 8
		maxRetries = 3
	)
	if testing.Short() {
		t.Skip("stress")
	}
	q := ratelimit.NewQueue(ratelimit.Config[int]{
		Name:    "stress",
		Limiter: &ratelimit.Exponential[int]{Base: time.Microsecond, Max: 50 * time.Microsecond},
	})

	var (
		held      = make([]atomic.Bool, items)
		attempts  = make([]int, items)
		succeeded = make([]bool, items)
		overlaps  atomic.Int64
		remaining atomic.Int64
		allDone   = make(chan struct{})
	)
	remaining.Store(items)

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 99))
			for {
				x, shutdown := q.Get()
				if shutdown {
					return
				}
				if !held[x].CompareAndSwap(false, true) {
					overlaps.Add(1)
				}
				if r.IntN(10) == 0 {
					q.Add(r.IntN(items))
				}
				if r.IntN(20) == 0 {
					q.Add(x) // changed again while being processed
				}
				if !succeeded[x] && attempts[x] < maxRetries && r.IntN(3) == 0 {
					attempts[x]++
					held[x].Store(false)
					q.AddRateLimited(x)
					q.Done(x)
					continue
				}
				q.Forget(x)
				if !succeeded[x] {
					succeeded[x] = true
					if remaining.Add(-1) == 0 {
						close(allDone)
					}
				}
				held[x].Store(false)
				q.Done(x)
			}
		})
	}
	for p := range 2 {
		wg.Go(func() {
			for i := p; i < items; i += 2 {
				q.Add(i)
			}
		})
	}

	select {
	case <-allDone:
	case <-time.After(5 * time.Minute):
		t.Fatalf("%d items never succeeded", remaining.Load())
	}
	q.ShutDown()
	testwait.Group(t, &wg, "workers and producers to stop after ShutDown")
	require.Zero(t, overlaps.Load(), "an item was handed to two workers at once")
	for x := range items {
		require.True(t, succeeded[x], "item %d", x)
		require.Zero(t, q.NumRequeues(x), "item %d forgotten on success", x)
	}
}
