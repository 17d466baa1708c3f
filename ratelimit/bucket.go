package ratelimit

import (
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
)

// Bucket holds all items together to the rate of a token bucket: each When
// takes a token, whatever the item, and returns how long until that token is
// due. It keeps nothing per item, so Forget does nothing and NumRequeues is
// always 0.
//
// The zero value is ready to use: a nil Limiter means a bucket of 100 tokens
// refilled at 10 per second, and a nil Clock means clock.Real. Share one
// rate.Limiter between Buckets to hold several queues to one budget, or
// change its rate at run time with its SetLimit and SetBurst. Use Bucket by
// pointer.
type Bucket[T comparable] struct {
	Limiter *rate.Limiter
	Clock   clock.Clock

	init sync.Once
}

func (b *Bucket[T]) When(T) time.Duration {
	b.init.Do(func() {
		if b.Limiter == nil {
			b.Limiter = rate.NewLimiter(10, 100)
		}
		if b.Clock == nil {
			b.Clock = clock.Real
		}
	})
	now := b.Clock.Now()
	// A reservation that cannot be met (burst 0) reports rate.InfDuration;
	// the queue copes with it, and MaxWait can bound it.
	return b.Limiter.ReserveN(now, 1).DelayFrom(now)
}

func (b *Bucket[T]) Forget(T) {}

func (b *Bucket[T]) NumRequeues(T) int { return 0 }
