package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/shard"
)

// controller moves keys from the informer's handler through a rate-limited
// queue to its workers, and decides after each attempt whether the key is
// done, retried later, or given up on.
type controller struct {
	queue   *ratelimit.Queue[string]
	rec     *tally
	retries int
	// member, if set, hands out the keys this replica may reconcile.
	member   *shard.Member
	identity string
	spans    bool

	outMu sync.Mutex
	out   io.Writer

	reconciled, retried, dropped atomic.Int64
}

// handler queues the key of every pod that changed. Only keys are queued:
// by the time a worker gets to one, the cache holds the latest state.
func (c *controller) handler() listwatch.HandlerFuncs {
	return listwatch.HandlerFuncs{
		AddFunc:    func(o *listwatch.Object, _ bool) { c.queue.Add(listwatch.Key(o)) },
		UpdateFunc: func(_, o *listwatch.Object) { c.queue.Add(listwatch.Key(o)) },
		DeleteFunc: func(o *listwatch.Object, _ bool) { c.queue.Add(listwatch.Key(o)) },
	}
}

// runWorker processes keys until the queue shuts down and is empty.
func (c *controller) runWorker(ctx context.Context) {
	for c.processNextItem(ctx) {
	}
}

func (c *controller) processNextItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	// Done lets the queue hand the key out again, to this worker or another,
	// if it changed while we held it.
	defer c.queue.Done(key)
	if c.member != nil {
		// Wait until no other replica may be on the key; the work then
		// runs under a context cancelled when the key moves away.
		kctx, release, err := c.member.Acquire(ctx, key)
		switch {
		case errors.Is(err, shard.ErrNotOwned):
			c.notOwned(key)
			return true
		case err != nil: // shutting down
			c.queue.Forget(key)
			return true
		}
		defer release()
		ctx = kctx
	}
	start := time.Now()
	result, rv, err := c.rec.reconcile(ctx, key)
	if c.spans {
		outcome := "ok"
		if err != nil {
			outcome = "error"
		}
		c.printf("span %s %s %s %d %d %s\n", c.identity, key, rv, start.UnixMicro(), time.Now().UnixMicro(), outcome)
	}
	c.handleErr(key, result, err)
	return true
}

// notOwned handles a key another replica owns by this replica's view. The
// relist that follows a ring change removes the keys this replica lost
// from its cache (each is queued once more, as a delete). Until then the
// ring may turn back, and the key would be this replica's again with no
// notification to come: so a key still cached is tried again later, and
// one gone from the cache is forgotten, with what was counted for it.
func (c *controller) notOwned(key string) {
	if c.rec.cached(key) {
		c.queue.AddRateLimited(key)
		return
	}
	c.queue.Forget(key)
	c.rec.forget(key)
}

func (c *controller) handleErr(key, result string, err error) {
	if err == nil {
		// Forget resets the key's backoff so its next failure retries fast.
		c.queue.Forget(key)
		c.reconciled.Add(1)
		c.printf("reconciled %s: %s\n", key, result)
		return
	}
	if n := c.queue.NumRequeues(key); n < c.retries {
		c.queue.AddRateLimited(key)
		c.retried.Add(1)
		c.printf("retry      %s (%d/%d): %v\n", key, n+1, c.retries, err)
		return
	}
	c.queue.Forget(key)
	c.dropped.Add(1)
	c.printf("dropped    %s after %d retries: %v\n", key, c.retries, err)
}

func (c *controller) printf(format string, args ...any) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	fmt.Fprintf(c.out, format, args...)
}
