package ratelimit

import "time"

// maxWait bounds how long the loop sleeps, so that it reports unfinished work
// to Metrics regularly and so that a timer that misbehaves (a clock stepped
// backwards, say) delays items by at most this much.
const maxWait = 10 * time.Second

// AddAfter adds item once d has passed. If item is already waiting for a
// delay, it keeps whichever ready time is earlier. A d of zero or less adds
// item at once, like Add. After ShutDown, AddAfter does nothing.
//
// AddAfter never blocks: the item goes straight into the queue's heap, and the
// queue's timer is moved earlier if item is now the first to be ready.
func (q *Queue[T]) AddAfter(item T, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if q.metrics != nil {
		q.metrics.Retried(q.name)
	}
	now := q.clock.Now()
	q.scheduleLocked(item, now.Add(d), now)
}

// AddAt adds item once the clock reads t or later, as AddAfter does with the
// delay from now to t, but reading now under the queue's lock: a caller
// keeping its own deadlines schedules an item exactly at one, however the
// clock moves while it decides. A t not after now adds item at once.
func (q *Queue[T]) AddAt(item T, t time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if q.metrics != nil {
		q.metrics.Retried(q.name)
	}
	q.scheduleLocked(item, t, q.clock.Now())
}

// scheduleLocked adds item at readyAt, at once if that is not after now,
// moving the timer earlier if item is now the first due; q.mu must be held.
func (q *Queue[T]) scheduleLocked(item T, readyAt, now time.Time) {
	d := readyAt.Sub(now)
	if d <= 0 {
		q.addLocked(item)
		return
	}
	if q.waiting.schedule(item, readyAt) {
		q.timer.Reset(min(d, maxWait))
	}
}

// AddRateLimited adds item after the delay the queue's Limiter chooses for it,
// which usually grows with each call until Forget.
func (q *Queue[T]) AddRateLimited(item T) {
	q.AddAfter(item, q.limiter.When(item))
}

// Forget tells the queue's Limiter that item succeeded, so its next
// AddRateLimited starts from the shortest delay again. It does not take the
// item out of the queue: the worker still calls Done.
func (q *Queue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns how many times the Limiter has delayed item since it
// was last forgotten.
func (q *Queue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }

// loop is the queue's one goroutine: each time the timer fires it moves the
// items whose time has come into the FIFO and sets the timer for the next
// one. AddAfter moves the timer earlier itself, so the loop never needs to be
// woken for a new item.
func (q *Queue[T]) loop() {
	defer close(q.loopDone)
	for {
		select {
		case <-q.stop:
			q.timer.Stop()
			return
		case <-q.timer.C():
		}
		q.mu.Lock()
		if !q.shuttingDown {
			q.readyLocked()
		}
		q.mu.Unlock()
	}
}

// readyLocked moves due items to the FIFO, reports unfinished work and
// re-arms the timer. Re-arming comes last so that a test seeing the fake
// clock's timer pending again knows the loop has finished its turn.
func (q *Queue[T]) readyLocked() {
	now := q.clock.Now()
	for q.waiting.len() > 0 && !q.waiting.peek().readyAt.After(now) {
		q.addLocked(q.waiting.pop())
	}
	if q.metrics != nil {
		var total, longest time.Duration
		for _, started := range q.busy {
			d := now.Sub(started)
			total += d
			longest = max(longest, d)
		}
		q.metrics.Unfinished(q.name, total, longest)
	}
	wait := maxWait
	if q.waiting.len() > 0 {
		wait = min(wait, q.waiting.peek().readyAt.Sub(now))
	}
	q.timer.Reset(wait)
}
