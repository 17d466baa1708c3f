package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// A controller: event handlers add keys, a worker syncs them and retries
// failures with growing delays.
func Example() {
	q := ratelimit.NewQueue(ratelimit.Config[string]{
		Name:    "pods",
		Limiter: &ratelimit.Exponential[string]{Base: time.Millisecond},
	})

	failuresLeft := map[string]int{"default/web": 2} // only the worker touches it
	syncPod := func(key string) error {
		if failuresLeft[key] > 0 {
			failuresLeft[key]--
			return errors.New("conflict")
		}
		return nil
	}

	// The deadline ends the wait if a key never syncs; the Output then differs.
	ctx, allSynced := context.WithTimeout(context.Background(), 10*time.Second)
	defer allSynced()
	unsynced := 2 // only the worker touches it
	worker := make(chan struct{})
	go func() {
		defer close(worker)
		for {
			key, shutdown := q.Get()
			if shutdown {
				return
			}
			if err := syncPod(key); err != nil {
				fmt.Printf("%s: %v, retry %d\n", key, err, q.NumRequeues(key)+1)
				q.AddRateLimited(key)
			} else {
				fmt.Printf("%s: synced\n", key)
				q.Forget(key)
				if unsynced--; unsynced == 0 {
					allSynced()
				}
			}
			q.Done(key)
		}
	}()

	// What event handlers would do; the repeated add is absorbed.
	q.Add("default/web")
	q.Add("default/db")
	q.Add("default/web")

	<-ctx.Done()
	q.ShutDown()
	<-worker
	// Output:
	// default/web: conflict, retry 1
	// default/db: synced
	// default/web: conflict, retry 2
	// default/web: synced
}

func ExampleQueue_AddAfter() {
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q := ratelimit.NewQueue(ratelimit.Config[string]{Clock: c})
	defer q.ShutDown()

	q.AddAfter("b", 2*time.Second)
	q.AddAfter("a", time.Second)
	q.AddAfter("a", time.Minute) // a keeps its earlier time
	q.AddAfter("now", 0)
	fmt.Println("ready at once:", q.Len())

	c.Step(2 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = c.WaitForWaiters(ctx, 1) // the queue has re-armed its timer
	for q.Len() > 0 {
		item, _ := q.Get()
		fmt.Println(item)
		q.Done(item)
	}
	// Output:
	// ready at once: 1
	// now
	// a
	// b
}

func ExampleExponential() {
	lim := &ratelimit.Exponential[string]{Base: 10 * time.Millisecond, Max: time.Second}
	var delays []time.Duration
	for range 8 {
		delays = append(delays, lim.When("web"))
	}
	fmt.Println(delays)
	lim.Forget("web")
	fmt.Println(lim.When("web"))
	// Output:
	// [10ms 20ms 40ms 80ms 160ms 320ms 640ms 1s]
	// 10ms
}

func ExampleMaxOf() {
	// Three quick retries, then one a minute; never faster than the bucket.
	lim := ratelimit.MaxOf[string]{
		&ratelimit.FastSlow[string]{Fast: 100 * time.Millisecond, Slow: time.Minute, FastAttempts: 3},
		ratelimit.MaxWait[string]{Limiter: &ratelimit.Exponential[string]{}, Max: time.Second},
	}
	for range 5 {
		fmt.Print(lim.When("web"), " ")
	}
	fmt.Println(lim.NumRequeues("web"))
	// Output: 100ms 100ms 100ms 1m0s 1m0s 5
}

// depthMetrics keeps the depth of each queue; NopMetrics supplies the
// methods it does not care about. To export it, publish the map with expvar
// or back the same methods with Prometheus gauges and histograms.
type depthMetrics struct {
	ratelimit.NopMetrics
	mu    sync.Mutex
	depth map[string]int
}

func (m *depthMetrics) Added(queue string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.depth[queue]++
}

func (m *depthMetrics) Started(queue string, _ time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.depth[queue]--
}

func ExampleMetrics() {
	m := &depthMetrics{depth: map[string]int{}}
	q := ratelimit.NewQueue(ratelimit.Config[string]{Name: "pods", Metrics: m})
	defer q.ShutDown()

	q.Add("a")
	q.Add("b")
	q.Add("a")
	fmt.Println(m.depth["pods"])
	item, _ := q.Get()
	q.Done(item)
	fmt.Println(m.depth["pods"])
	// Output:
	// 2
	// 1
}
