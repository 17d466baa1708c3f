package clock

import (
	"context"
	"sync"
	"time"
)

// Fake is a Clock that moves only when told to. Timers fire, in deadline
// order, when Step or Set moves the time past their deadline. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*fakeTimer]struct{}
	changed chan struct{} // closed and replaced whenever the set of timers changes
}

// NewFake returns a Fake reading t.
func NewFake(t time.Time) *Fake {
	return &Fake{now: t, timers: map[*fakeTimer]struct{}{}, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since returns the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// NewTimer returns a timer that fires once the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{clock: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Step moves the time forward by d, firing due timers.
func (f *Fake) Step(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the time to t, firing due timers.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = t
	for tm := range f.timers {
		if !tm.deadline.After(t) {
			delete(f.timers, tm)
			select {
			case tm.c <- tm.deadline:
			default:
			}
		}
	}
	f.notify()
}

// Waiters returns how many timers are pending.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.timers)
}

// WaitForWaiters blocks until at least n timers are pending or ctx is done,
// so a test can step the clock only once the code under test is waiting.
func (f *Fake) WaitForWaiters(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		enough, changed := len(f.timers) >= n, f.changed
		f.mu.Unlock()
		if enough {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// notify wakes WaitForWaiters; f.mu must be held.
func (f *Fake) notify() {
	close(f.changed)
	f.changed = make(chan struct{})
}

type fakeTimer struct {
	clock    *Fake
	c        chan time.Time
	deadline time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	_, pending := f.timers[t]
	delete(f.timers, t)
	f.notify()
	return pending
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	f := t.clock
	f.mu.Lock()
	defer f.mu.Unlock()
	_, pending := f.timers[t]
	t.deadline = f.now.Add(d)
	if d <= 0 {
		delete(f.timers, t)
		select {
		case t.c <- t.deadline:
		default:
		}
	} else {
		f.timers[t] = struct{}{}
	}
	f.notify()
	return pending
}
