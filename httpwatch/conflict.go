package httpwatch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// Retry says how RetryOnConflict retries: at most Steps attempts, waiting
// Initial before the second, then Factor times longer each time, each wait
// stretched by up to Jitter of itself at random.
type Retry struct {
	Steps   int
	Initial time.Duration
	Factor  float64
	Jitter  float64
	// Clock times the waits (clock.Real if nil); Random returns numbers in
	// [0, 1) for the jitter (rand.Float64 if nil).
	Clock  clock.Clock
	Random func() float64
}

// DefaultRetry is client-go's retry.DefaultRetry: five attempts, 10 ms
// apart with 10% jitter. Conflicts clear quickly: the next read sees the
// other writer's change.
var DefaultRetry = Retry{Steps: 5, Initial: 10 * time.Millisecond, Factor: 1, Jitter: 0.1}

// RetryOnConflict calls fn until it returns something other than a 409
// Conflict (IsConflict), at most r.Steps times, and returns its last error.
// fn must read the object afresh each time: a conflict means the version
// it wrote over is stale.
//
//	err := httpwatch.RetryOnConflict(ctx, httpwatch.DefaultRetry, func(ctx context.Context) error {
//		o, err := cms.Get(ctx, "settings")
//		if err != nil {
//			return err
//		}
//		_, err = cms.Update(ctx, withLabel(o, "checked", "true"))
//		return err
//	})
func RetryOnConflict(ctx context.Context, r Retry, fn func(context.Context) error) error {
	clk, random := r.Clock, r.Random
	if clk == nil {
		clk = clock.Real
	}
	if random == nil {
		random = rand.Float64
	}
	wait := r.Initial
	var err error
	for attempt := 1; ; attempt++ {
		if err = fn(ctx); !IsConflict(err) || attempt >= r.Steps {
			return err
		}
		d := wait + time.Duration(r.Jitter*random()*float64(wait))
		t := clk.NewTimer(d)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("retry on conflict: %w (after %w)", ctx.Err(), err)
		}
		if r.Factor > 0 {
			wait = time.Duration(float64(wait) * r.Factor)
		}
	}
}
