package ratelimit

import (
	"time"

	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
)

// Limiter decides how long an item that failed should wait before it is
// retried. Implementations must be safe for concurrent use.
type Limiter[T comparable] interface {
	// When records one more failure of item and returns how long to wait
	// before retrying it.
	When(item T) time.Duration
	// Forget clears what the limiter remembers about item, usually because it
	// succeeded.
	Forget(item T)
	// NumRequeues returns how many failures of item are remembered.
	NumRequeues(item T) int
}

// DefaultControllerRateLimiter returns the limiter most controllers want and
// the one NewQueue uses when none is given: each item backs off
// exponentially from 5ms to 1000s, and all retries together are held to 10
// per second with bursts of 100. The longer of the two delays wins.
func DefaultControllerRateLimiter[T comparable]() Limiter[T] {
	return defaultController[T](clock.Real)
}

func defaultController[T comparable](c clock.Clock) Limiter[T] {
	return MaxOf[T]{
		&Exponential[T]{Base: 5 * time.Millisecond, Max: 1000 * time.Second},
		&Bucket[T]{Limiter: rate.NewLimiter(10, 100), Clock: c},
	}
}

// DefaultItemBasedRateLimiter returns a limiter that backs each item off
// exponentially from 1ms to 1000s, with no limit shared across items.
func DefaultItemBasedRateLimiter[T comparable]() Limiter[T] {
	return &Exponential[T]{Base: time.Millisecond, Max: 1000 * time.Second}
}

// MaxOf combines limiters: When asks every one of them (so each records the
// failure) and returns the longest delay; NumRequeues is the largest count;
// Forget forgets in all of them. An empty MaxOf never delays; a nil element
// is a programming error.
type MaxOf[T comparable] []Limiter[T]

func (m MaxOf[T]) When(item T) time.Duration {
	var d time.Duration
	for _, l := range m {
		d = max(d, l.When(item))
	}
	return d
}

func (m MaxOf[T]) Forget(item T) {
	for _, l := range m {
		l.Forget(item)
	}
}

func (m MaxOf[T]) NumRequeues(item T) int {
	var n int
	for _, l := range m {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// MaxWait caps the delays of Limiter, which must be set, at Max. Forget and
// NumRequeues go to Limiter unchanged.
type MaxWait[T comparable] struct {
	Limiter Limiter[T]
	Max     time.Duration
}

func (m MaxWait[T]) When(item T) time.Duration { return min(m.Limiter.When(item), m.Max) }
func (m MaxWait[T]) Forget(item T)             { m.Limiter.Forget(item) }
func (m MaxWait[T]) NumRequeues(item T) int    { return m.Limiter.NumRequeues(item) }
