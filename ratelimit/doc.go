// Package ratelimit is the work queue a controller puts between the events
// it watches and the workers that act on them, with the rate limiters that
// space out retries of items that fail.
//
// A Queue is one type that does everything: it deduplicates waiting items,
// never gives one item to two workers at once, adds items after a delay
// (AddAfter) and retries failed items after a delay chosen by a Limiter
// (AddRateLimited). Event handlers add keys; workers loop on Get and Done:
//
//	q := ratelimit.NewQueue(ratelimit.Config[string]{Name: "pods"})
//	defer q.ShutDown()
//
//	// in an event handler:
//	q.Add(namespace + "/" + name)
//
//	// in each worker goroutine:
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := sync(key); err != nil {
//			q.AddRateLimited(key) // retry later, backing off
//		} else {
//			q.Forget(key) // succeeded: the next failure starts from the shortest delay
//		}
//		q.Done(key)
//	}
//
// Limiters combine: Exponential backs off each item on its own, FastSlow
// retries a few times quickly and then slowly, Bucket holds all items to a
// shared rate (golang.org/x/time/rate), MaxOf takes the longest of several
// delays and MaxWait caps one. DefaultControllerRateLimiter is the usual mix.
//
// # Goroutines and time
//
// NewQueue starts one goroutine per queue, which ShutDown stops before it
// returns. It sleeps on a single timer until the earliest delayed item is
// due, and at most 10 seconds; delayed items wait in a min-heap, so a queue
// holding a hundred thousand of them still has one goroutine and one timer.
// AddAfter never blocks: it inserts into the heap and, if the new item is now
// the first due, moves the timer earlier itself.
//
// Every reading of the time goes through Config.Clock, so tests drive a
// queue with clock.NewFake and never sleep.
//
// # Metrics
//
// Config.Metrics receives events (added, started, finished, retried) from
// which depth, adds, queue latency, work duration and retries follow, and the
// unfinished work of items being processed, which the queue's goroutine
// reports each time it wakes, so at least every 10 seconds. Reporting from
// the goroutine that wakes anyway costs no extra timer, and ten seconds is
// fine enough to see a stuck worker, which is what that gauge is for.
package ratelimit
