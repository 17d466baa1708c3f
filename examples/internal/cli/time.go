package cli

import (
	"context"
	"time"
)

// WithDuration returns a copy of ctx that also ends after d, for a
// --duration flag; 0 means no limit.
func WithDuration(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}

// Every calls f every period until ctx is done, for a command's periodic
// work such as a report.
func Every(ctx context.Context, period time.Duration, f func()) {
	tick := time.NewTicker(period)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}
