package bench_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/util/workqueue"

	"github.com/listwatch/listwatch/ratelimit"
)

// Each benchmark runs the same workload on listwatch's ratelimit.Queue and on
// client-go's workqueue: the rate-limiting queue (what a controller built on
// client-go uses, and what ratelimit.Queue replaces) and, where the workload
// needs no delays, the plain typed queue underneath it. Keys are strings of
// the namespace/name shape, made before the timer starts.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// queue is what the workloads need of a work queue.
type queue interface {
	Add(string)
	Get() (string, bool)
	Done(string)
	ShutDown()
}

// delayingQueue can also add items later.
type delayingQueue interface {
	queue
	AddAfter(string, time.Duration)
}

var queues = []struct {
	name string
	new  func() queue
}{
	{"listwatch", func() queue { return ratelimit.NewQueue(ratelimit.Config[string]{}) }},
	{"client-go-ratelimiting", func() queue {
		return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	}},
	{"client-go-typed", func() queue { return workqueue.NewTyped[string]() }},
}

var delayingQueues = []struct {
	name string
	new  func() delayingQueue
}{
	{"listwatch", func() delayingQueue { return ratelimit.NewQueue(ratelimit.Config[string]{}) }},
	{"client-go-ratelimiting", func() delayingQueue {
		return workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	}},
}

// keys returns n distinct keys.
func keys(n int) []string {
	ks := make([]string, n)
	for i := range ks {
		ks[i] = fmt.Sprintf("team-%02d/pod-%07d", i%50, i)
	}
	return ks
}

var manyKeys = keys(1 << 18)

// One op is one item through Add, Get and Done on one goroutine.
func BenchmarkQueueSequential(b *testing.B) {
	for _, q := range queues {
		b.Run(q.name, func(b *testing.B) {
			wq := q.new()
			defer wq.ShutDown()
			b.ReportAllocs()
			for i := range b.N {
				wq.Add(manyKeys[i&(len(manyKeys)-1)])
				k, _ := wq.Get()
				wq.Done(k)
			}
		})
	}
}

// work has workers drain wq while the benchmark goroutine adds b.N keys
// drawn from ks in turn; one op is one Add, processed.
func work(b *testing.B, wq queue, workers int, ks []string) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k, shutdown := wq.Get()
				if shutdown {
					return
				}
				wq.Done(k)
			}
		})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		wq.Add(ks[i%len(ks)])
	}
	wq.ShutDown() // both queues hand out what is left, then stop the workers
	wg.Wait()
}

// One op is one Add of a distinct key, handed to one of the workers.
func BenchmarkQueueWorkers(b *testing.B) {
	for _, workers := range []int{1, 8} {
		for _, q := range queues {
			b.Run(fmt.Sprintf("workers=%d/%s", workers, q.name), func(b *testing.B) {
				work(b, q.new(), workers, manyKeys)
			})
		}
	}
}

// One op is one Add of one of 100 keys with 8 workers: most adds find the key
// already waiting or being processed, the deduplication path.
func BenchmarkQueueHotKeys(b *testing.B) {
	hot := keys(100)
	for _, q := range queues {
		b.Run(q.name, func(b *testing.B) {
			work(b, q.new(), 8, hot)
		})
	}
}

// One op is one AddAfter of a new key while 100,000 keys already wait for
// delays of one to two hours. client-go hands each AddAfter to its queue's
// goroutine through a channel, so the benchmark ends by waiting for a
// sentinel added last: all earlier adds have been taken in by then.
func BenchmarkAddAfter(b *testing.B) {
	const pending = 100_000
	waiting := keys(pending)
	for _, q := range delayingQueues {
		b.Run(q.name, func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			delay := func() time.Duration { return time.Hour + time.Duration(r.Int64N(int64(time.Hour))) }
			wq := q.new()
			defer wq.ShutDown()
			for _, k := range waiting {
				wq.AddAfter("w/"+k, delay())
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				wq.AddAfter(manyKeys[i&(len(manyKeys)-1)], delay())
			}
			wq.AddAfter("sentinel", time.Nanosecond)
			if k, _ := wq.Get(); k != "sentinel" {
				b.Fatalf("got %q, want the sentinel", k)
			}
		})
	}
}
