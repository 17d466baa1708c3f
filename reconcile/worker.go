package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/shard"
)

// term reconciles with a fresh queue until work is done: the whole run
// without an election, one leadership otherwise. The queue starts with
// every cached key. With drain, the workers finish the queued keys (within
// ShutdownTimeout) before term returns; without, they stop after the key
// in hand, whose context work's end has cancelled.
func (r *Runner) term(work context.Context, drain bool) error {
	lim := r.Limiter
	if lim == nil {
		lim = defaultLimiter(r.Clock)
	}
	q := ratelimit.NewQueue(ratelimit.Config[string]{Name: r.Name, Clock: r.Clock, Metrics: r.QueueMetrics})
	r.mu.Lock()
	r.queue = q
	r.mu.Unlock()
	// After the queue is in place: a change the listing misses is one the
	// handlers see afterwards.
	for _, key := range r.For.Indexer().ListKeys() {
		r.add(key, false)
	}
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(work))
	defer cancelWork()
	stop := context.AfterFunc(work, func() {
		if !drain {
			cancelWork()
		}
	})
	defer stop()
	var workers sync.WaitGroup
	for range r.Workers {
		workers.Go(func() { r.work(workCtx, q, lim) })
	}

	<-work.Done()
	r.mu.Lock()
	r.queue = nil // stop intake
	r.mu.Unlock()
	if !drain {
		q.ShutDown()
		workers.Wait()
		return nil
	}
	finished := make(chan struct{})
	go func() { workers.Wait(); close(finished) }()
	var drainer sync.WaitGroup
	drainer.Go(q.ShutDownWithDrain)
	defer drainer.Wait() // the ShutDown below ends its wait either way
	deadline := r.Clock.NewTimer(r.ShutdownTimeout)
	defer deadline.Stop()
	select {
	case <-finished:
		q.ShutDown() // ends the drain's wait, and the queue's goroutine
		return nil
	case <-deadline.C():
	}
	stuck := r.busyKeys()
	cancelWork()
	q.ShutDown()
	r.Logger.Error("reconcile: shutdown timeout passed with workers busy; their contexts are cancelled",
		"runner", r.Name, "timeout", r.ShutdownTimeout, "keys", stuck)
	return fmt.Errorf("%w (%v): busy with %s", ErrDrainTimeout, r.ShutdownTimeout, strings.Join(stuck, ", "))
}

func (r *Runner) busyKeys() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.inFlight))
}

// add queues key if the runner takes keys; force reconciles it even if its
// object has not changed since it was last reconciled.
func (r *Runner) add(key string, force bool) {
	r.mu.Lock()
	q := r.queue
	if q != nil && force {
		r.forced[key] = true
	}
	r.mu.Unlock()
	if q != nil {
		q.Add(key)
	}
}

// work reconciles keys until the queue shuts down.
func (r *Runner) work(ctx context.Context, q *ratelimit.Queue[string], lim ratelimit.Limiter[string]) {
	for {
		key, shutdown := q.Get()
		if shutdown {
			return
		}
		r.process(ctx, q, lim, key)
		q.Done(key)
	}
}

// version returns the resourceVersion the cache holds for key, "" if none.
func (r *Runner) version(key string) (rv string, cached bool) {
	obj, ok, err := r.For.Indexer().GetByKey(key)
	if err != nil || !ok {
		return "", false
	}
	return obj.ResourceVersion(), true
}

// begin takes the key's forced flag and says whether it needs a reconcile;
// if not, it returns when the key is due for a retry or RequeueAfter (zero
// if never).
func (r *Runner) begin(key, rv string) (run bool, due time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	forced := r.forced[key]
	delete(r.forced, key)
	if due, ok := r.due[key]; ok && !r.Clock.Now().Before(due) {
		forced = true // the retry's or RequeueAfter's time has come
		delete(r.due, key)
	}
	if done, ok := r.done[key]; !forced && (ok && done == rv || !ok && rv == "") {
		return false, r.due[key]
	}
	r.inFlight[key] = true
	return true, time.Time{}
}

// end records the version of key a reconcile saw, and when to reconcile
// it again (after, if positive) though it does not change, returning that
// time. A reconcile's Result replaces those of earlier ones.
func (r *Runner) end(key, rv string, cached bool, after time.Duration) (due time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.inFlight, key)
	delete(r.due, key)
	if after > 0 {
		due = r.Clock.Now().Add(after)
		r.due[key] = due
	}
	if cached {
		r.done[key] = rv
	} else {
		delete(r.done, key) // gone: nothing to remember
	}
	return due
}

func (r *Runner) process(ctx context.Context, q *ratelimit.Queue[string], lim ratelimit.Limiter[string], key string) {
	rv, cached := r.version(key)
	run, due := r.begin(key, rv)
	if !run {
		if !due.IsZero() {
			// Taken before its time: by a notification of the version
			// reconciled, or by an earlier retry still in the queue's heap
			// when this time was asked for (the queue keeps the earlier
			// of two). Keep the time, or it would be lost.
			q.AddAt(key, due)
		}
		return
	}
	if r.Member != nil {
		kctx, release, err := r.Member.Acquire(ctx, key)
		if err != nil {
			r.notAcquired(q, lim, key, cached, err)
			return
		}
		defer release()
		ctx = kctx
	}
	var start time.Time
	if r.Observe != nil {
		start = r.Clock.Now()
	}
	res, err := r.call(ctx, key)
	outcome, after := Success, time.Duration(0)
	switch {
	case err != nil:
		outcome, after = Error, lim.When(key)
		r.failed(ctx, key, after, err)
	case res.RequeueAfter > 0:
		lim.Forget(key)
		outcome, after = RequeueAfter, res.RequeueAfter
	case res.Requeue:
		outcome, after = Requeue, lim.When(key)
	default:
		lim.Forget(key)
	}
	if err == nil {
		r.succeeded(key)
	}
	if due := r.end(key, rv, cached, after); !due.IsZero() {
		q.AddAt(key, due)
	}
	if r.Observe != nil {
		r.Observe(key, r.Clock.Since(start), outcome)
	}
}

// notAcquired handles a key the shard member did not hand out. One another
// member owns is tried again later while the cache holds it (the ring may
// turn back before the relist drops it), and forgotten once it does not.
func (r *Runner) notAcquired(q *ratelimit.Queue[string], lim ratelimit.Limiter[string], key string, cached bool, err error) {
	r.mu.Lock()
	delete(r.inFlight, key)
	delete(r.failing, key) // another member's now, or gone
	if cached || !errors.Is(err, shard.ErrNotOwned) {
		r.forced[key] = true
	} else {
		delete(r.done, key)
	}
	r.mu.Unlock()
	if errors.Is(err, shard.ErrNotOwned) && cached {
		q.AddAfter(key, lim.When(key))
		return
	}
	lim.Forget(key)
}

// call runs Reconcile, turning a panic into an error.
func (r *Runner) call(ctx context.Context, key string) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{key: key, value: p}
		}
	}()
	return r.Reconcile(ctx, key)
}

// defaultLimiter is ratelimit.DefaultControllerRateLimiter's mix on clk:
// each key backs off from 5 ms to 1000 s, all retries together at most 10
// a second with bursts of 100.
func defaultLimiter(clk clock.Clock) ratelimit.Limiter[string] {
	return ratelimit.MaxOf[string]{
		&ratelimit.Exponential[string]{Base: 5 * time.Millisecond, Max: 1000 * time.Second},
		&ratelimit.Bucket[string]{Limiter: rate.NewLimiter(10, 100), Clock: clk},
	}
}
