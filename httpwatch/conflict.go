package httpwatch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// RetryOnConflict calls fn until it returns something other than a 409
// Conflict (IsConflict), at most five times, 10 ms apart with up to 10%
// jitter (client-go's retry.DefaultRetry: conflicts clear quickly, the next
// read sees the other writer's change), and returns its last error. fn
// must read the object afresh each time: a conflict means the version it
// wrote over is stale.
//
//	err := httpwatch.RetryOnConflict(ctx, func(ctx context.Context) error {
//		o, err := cms.Get(ctx, "settings")
//		if err != nil {
//			return err
//		}
//		_, err = cms.Update(ctx, withLabel(o, "checked", "true"))
//		return err
//	})
func RetryOnConflict(ctx context.Context, fn func(context.Context) error) error {
	return onConflict.do(ctx, fn)
}

// onConflict is client-go's retry.DefaultRetry: five attempts, 10 ms
// apart, each wait stretched by up to a tenth.
var onConflict = conflictRetry{steps: 5, initial: 10 * time.Millisecond, factor: 1, jitter: 0.1, clock: clock.Real, random: rand.Float64}

// conflictRetry is how RetryOnConflict retries: at most steps attempts,
// waiting initial before the second, then factor times longer each time,
// each wait stretched by up to jitter of itself at random (in [0, 1)).
type conflictRetry struct {
	steps          int
	initial        time.Duration
	factor, jitter float64
	clock          clock.Clock
	random         func() float64
}

func (r conflictRetry) do(ctx context.Context, fn func(context.Context) error) error {
	wait := r.initial
	var err error
	for attempt := 1; ; attempt++ {
		if err = fn(ctx); !IsConflict(err) || attempt >= r.steps {
			return err
		}
		d := wait + time.Duration(r.jitter*r.random()*float64(wait))
		t := r.clock.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry on conflict: %w (after %w)", ctx.Err(), err)
		}
		wait = time.Duration(float64(wait) * r.factor)
	}
}
