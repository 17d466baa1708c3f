package ratelimit

import (
	"math"
	"sync"
	"time"
)

// Exponential backs each item off on its own: the n-th failure of an item
// since it was last forgotten waits Base·2ⁿ⁻¹, never more than Max. The zero
// value is ready to use, with Base 5ms and Max 1000s; a Base or Max of zero
// or less also means the default. Use it by pointer.
type Exponential[T comparable] struct {
	Base time.Duration
	Max  time.Duration

	mu       sync.Mutex
	failures map[T]int
}

func (e *Exponential[T]) When(item T) time.Duration {
	e.mu.Lock()
	if e.failures == nil {
		e.failures = map[T]int{}
	}
	n := e.failures[item]
	e.failures[item] = n + 1
	e.mu.Unlock()

	base, ceiling := e.Base, e.Max
	if base <= 0 {
		base = 5 * time.Millisecond
	}
	if ceiling <= 0 {
		ceiling = 1000 * time.Second
	}
	// In floating point, 2ⁿ for a large n is +Inf rather than a wrapped
	// integer, so an overflowing delay compares above the ceiling.
	d := float64(base) * math.Pow(2, float64(n))
	if d >= float64(ceiling) {
		return ceiling
	}
	return time.Duration(d)
}

func (e *Exponential[T]) Forget(item T) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.failures, item)
}

func (e *Exponential[T]) NumRequeues(item T) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.failures[item]
}

// FastSlow retries each item quickly a few times, then slowly: the first
// FastAttempts failures of an item since it was last forgotten wait Fast, the
// rest wait Slow. The zero value never delays. Use it by pointer.
type FastSlow[T comparable] struct {
	Fast         time.Duration
	Slow         time.Duration
	FastAttempts int

	mu       sync.Mutex
	attempts map[T]int
}

func (f *FastSlow[T]) When(item T) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attempts == nil {
		f.attempts = map[T]int{}
	}
	f.attempts[item]++
	if f.attempts[item] <= f.FastAttempts {
		return f.Fast
	}
	return f.Slow
}

func (f *FastSlow[T]) Forget(item T) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.attempts, item)
}

func (f *FastSlow[T]) NumRequeues(item T) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.attempts[item]
}
