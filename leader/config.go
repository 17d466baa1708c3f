package leader

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/lease"
)

// Record is the spec of a coordination.k8s.io/v1 Lease as this package
// reads and writes it.
type Record = lease.Record

// Defaults for the zero fields of Config, client-go's values.
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
	DefaultJitterFactor  = 1.2
)

// Config configures an Elector. Leases, Name and Identity are required;
// zero durations take the defaults above.
type Config struct {
	// Leases addresses coordination.k8s.io/v1 leases in one namespace:
	//
	//	client.Resource(httpwatch.Resource{Group: "coordination.k8s.io",
	//		Version: "v1", Resource: "leases", Namespace: ns})
	Leases *httpwatch.ResourceClient
	// Name is the Lease all candidates compete for; it is created if absent.
	Name string
	// Identity names this candidate, unique among them (e.g. the pod name).
	Identity string

	// LeaseDuration is how long a candidate waits, from when it last saw
	// the lease change, before it takes the lease from a silent holder.
	LeaseDuration time.Duration
	// RenewDeadline is how long the leader keeps trying to renew, from the
	// moment it sent its last successful renewal, before it steps down. It
	// is below LeaseDuration so the leader stops before anyone can take over.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between attempts to take or renew the lease.
	RetryPeriod time.Duration
	// JitterFactor spreads a candidate's attempts: each wait adds a random
	// part of JitterFactor*RetryPeriod. Zero means DefaultJitterFactor.
	JitterFactor float64
	// Jitter returns a number in [0, 1); nil means math/rand. Tests pin it.
	Jitter func() float64

	// ReleaseOnCancel makes the leader, when Run's context is cancelled,
	// wait for OnStartedLeading to return and then give the lease up, so
	// another candidate takes over at its next attempt.
	ReleaseOnCancel bool

	// OnStartedLeading runs in its own goroutine when this candidate becomes
	// leader; its context is cancelled when leadership ends, and it must
	// stop acting on the leader's behalf then. Required.
	OnStartedLeading func(ctx context.Context)
	// OnStoppedLeading, if set, runs after OnStartedLeading has returned.
	OnStoppedLeading func()
	// OnNewLeader, if set, is called with each new holder this candidate
	// observes, itself included. It runs on the election loop: keep it short.
	OnNewLeader func(identity string)

	// OnError, if set, sees every lease request that failed, on the
	// election loop (keep it short); the candidate retries at its next
	// attempt. Lost races (409 Conflict) are among them; cancellation by
	// Run's context is not.
	OnError func(error)
	// Logger gets the first occurrence of each distinct failure at Warn,
	// or at Error with what to do when retrying will not cure it (401,
	// 403, the Lease API or the namespace missing), repeats as a count,
	// and the recovery at Info; a healthy candidate logs nothing above
	// Debug. Nil means slog.Default().
	Logger *slog.Logger

	// Clock drives every wait and expiry; nil means clock.Real.
	Clock clock.Clock
}

// ErrConfig is wrapped by every error New returns for a bad Config.
var ErrConfig = errors.New("invalid leader election config")

func (c *Config) setDefaults() {
	t := c.timing().WithDefaults()
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod
	if c.JitterFactor == 0 {
		c.JitterFactor = DefaultJitterFactor
	}
	if c.Jitter == nil {
		c.Jitter = rand.Float64
	}
	if c.Clock == nil {
		c.Clock = clock.Real
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

func (c *Config) validate() error {
	switch {
	case c.Leases == nil:
		return fmt.Errorf("%w: Leases is nil", ErrConfig)
	case c.Name == "":
		return fmt.Errorf("%w: Name is empty", ErrConfig)
	case c.Identity == "":
		return fmt.Errorf("%w: Identity is empty", ErrConfig)
	case c.OnStartedLeading == nil:
		return fmt.Errorf("%w: OnStartedLeading is nil", ErrConfig)
	case c.JitterFactor < 0:
		return fmt.Errorf("%w: JitterFactor must be positive", ErrConfig)
	}
	if err := c.timing().Check(c.JitterFactor); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

func (c *Config) timing() lease.Timing {
	return lease.Timing{LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod}
}
