package ratelimit_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
)

// One op is one item through Add, Get and Done: added by the benchmark's
// goroutine, processed by the workers.
func BenchmarkAddGetDone(b *testing.B) {
	b.Run("sequential", func(b *testing.B) {
		q := ratelimit.NewQueue(ratelimit.Config[int]{})
		defer q.ShutDown()
		b.ReportAllocs()
		for i := range b.N {
			q.Add(i)
			x, _ := q.Get()
			q.Done(x)
		}
	})
	b.Run("sequential+metrics", func(b *testing.B) {
		q := ratelimit.NewQueue(ratelimit.Config[int]{Metrics: struct{ ratelimit.NopMetrics }{}})
		defer q.ShutDown()
		b.ReportAllocs()
		for i := range b.N {
			q.Add(i)
			x, _ := q.Get()
			q.Done(x)
		}
	})
	for _, workers := range []int{1, 8} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			q := ratelimit.NewQueue(ratelimit.Config[int]{})
			var wg sync.WaitGroup
			for range workers {
				wg.Go(func() {
					for {
						x, shutdown := q.Get()
						if shutdown {
							return
						}
						q.Done(x)
					}
				})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				q.Add(i)
			}
			q.ShutDown() // workers drain what is left, then stop
			wg.Wait()
		})
	}
}

// One op is one AddAfter of a new item into a heap already holding between
// 100,000 and 200,000 delayed items.
func BenchmarkAddAfter(b *testing.B) {
	const pending = 100_000
	r := rand.New(rand.NewPCG(1, 2))
	delay := func() time.Duration { return time.Hour + time.Duration(r.Int64N(int64(time.Hour))) }
	fill := func() *ratelimit.Queue[int] {
		q := ratelimit.NewQueue(ratelimit.Config[int]{Clock: clock.NewFake(time.Unix(0, 0))})
		for i := range pending {
			q.AddAfter(-1-i, delay())
		}
		return q
	}
	q := fill()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if i > 0 && i%pending == 0 {
			b.StopTimer()
			q.ShutDown()
			q = fill()
			b.StartTimer()
		}
		q.AddAfter(i, delay())
	}
	b.StopTimer()
	q.ShutDown()
}

func BenchmarkDefaultControllerRateLimiter(b *testing.B) {
	lim := ratelimit.DefaultControllerRateLimiter[int]()
	b.ReportAllocs()
	for i := range b.N {
		lim.When(i % 1000)
	}
}
