package lease

import (
	"errors"
	"fmt"
	"time"
)

// Defaults for zero durations: client-go's values.
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
)

// Timing is the durations leader and shard both take, with the rules
// that keep a holder from acting after others may have taken over.
type Timing struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// WithDefaults returns t with its zero durations set to the defaults.
func (t Timing) WithDefaults() Timing {
	if t.LeaseDuration == 0 {
		t.LeaseDuration = DefaultLeaseDuration
	}
	if t.RenewDeadline == 0 {
		t.RenewDeadline = DefaultRenewDeadline
	}
	if t.RetryPeriod == 0 {
		t.RetryPeriod = DefaultRetryPeriod
	}
	return t
}

// Check reports what is wrong with t: a negative duration, a RenewDeadline
// not below LeaseDuration, or one that a retry wait could use up.
// jitter is the JitterFactor retries are spread by, 0 for none.
func (t Timing) Check(jitter float64) error {
	switch {
	case t.LeaseDuration < 0 || t.RenewDeadline < 0 || t.RetryPeriod < 0:
		return errors.New("durations must be positive")
	case t.LeaseDuration <= t.RenewDeadline:
		return fmt.Errorf("LeaseDuration (%v) must exceed RenewDeadline (%v)", t.LeaseDuration, t.RenewDeadline)
	case jitter > 0 && float64(t.RenewDeadline) <= jitter*float64(t.RetryPeriod):
		return fmt.Errorf("RenewDeadline (%v) must exceed JitterFactor*RetryPeriod (%v*%v)", t.RenewDeadline, jitter, t.RetryPeriod)
	case jitter == 0 && t.RenewDeadline <= t.RetryPeriod:
		return fmt.Errorf("RenewDeadline (%v) must exceed RetryPeriod (%v)", t.RenewDeadline, t.RetryPeriod)
	}
	return nil
}
