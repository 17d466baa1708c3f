package shard

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/lease"
)

// Defaults for the zero fields of Config: client-go's values, as in
// package leader.
const (
	DefaultLeaseDuration = lease.DefaultLeaseDuration
	DefaultRenewDeadline = lease.DefaultRenewDeadline
	DefaultRetryPeriod   = lease.DefaultRetryPeriod
)

// The label that marks a membership lease as one of a group's, and the
// annotation in which a member publishes the members it has acknowledged
// (their identities, sorted, joined by commas).
const (
	GroupLabel        = "shard.listwatch.io/group"
	MembersAnnotation = "shard.listwatch.io/members"
)

// maxIdentityLen bounds an identity, so that the annotation listing a
// group's members stays small.
const maxIdentityLen = 128

// Config configures a Member. Leases, Group and Identity are required;
// zero durations take the defaults above.
type Config struct {
	// Leases addresses coordination.k8s.io/v1 leases in the namespace where
	// the group's members keep theirs.
	Leases *httpwatch.ResourceClient
	// Group names the set of replicas that share the keys; every member's
	// lease carries it as the label GroupLabel.
	Group string
	// Identity names this member, unique among the group's running
	// replicas (e.g. the pod name): a replica started under the identity of
	// one still running takes over its lease and its claims.
	Identity string
	// Name is this member's lease; empty means Group + "-" + Identity. A
	// lease of that name that another group made (its GroupLabel differs)
	// is left alone, and each attempt's error reaches OnError.
	Name string

	// LeaseDuration is how long the others wait, from when they last saw
	// this member's lease change, before they take it for dead.
	LeaseDuration time.Duration
	// RenewDeadline is how long after it sent its last successful renewal
	// the member stops processing keys; below LeaseDuration.
	RenewDeadline time.Duration
	// RetryPeriod is the wait between rounds: renew the own lease, then
	// read the group's.
	RetryPeriod time.Duration

	// OnChange, if set, is called with the live members (sorted) each time
	// this member's view of them changes, before any key changes hands: an
	// informer filtered by Member.Source relists there (Informer.Relist).
	// It runs on the member's loop: keep it short.
	OnChange func(members []string)

	// OnError, if set, sees every request of the member that failed (a
	// renewal, a read of the group, an eviction, lost races included); the
	// member retries at its next round. Cancellation by Run's context is
	// not reported. It runs on the member's loop: keep it short.
	OnError func(error)
	// Logger gets the first occurrence of each distinct failure at Warn,
	// or at Error with what to do when retrying will not cure it (401,
	// 403, the Lease API or the namespace missing, a lease of the member's
	// name that another user made), repeats as a count, and the recovery
	// at Info; a healthy member logs nothing above Debug. Nil means
	// slog.Default().
	Logger *slog.Logger

	// Clock drives every wait and expiry; nil means clock.Real.
	Clock clock.Clock
}

// ErrConfig is wrapped by every error New returns for a bad Config.
var ErrConfig = errors.New("invalid shard config")

func (c *Config) setDefaults() {
	t := c.timing().WithDefaults()
	c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = t.LeaseDuration, t.RenewDeadline, t.RetryPeriod
	if c.Name == "" {
		c.Name = c.Group + "-" + c.Identity
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
	case c.Group == "":
		return fmt.Errorf("%w: Group is empty", ErrConfig)
	case c.Identity == "" || len(c.Identity) > maxIdentityLen || strings.ContainsAny(c.Identity, membersSeparator+" "):
		return fmt.Errorf("%w: Identity %q must be 1 to %d characters without commas or spaces", ErrConfig, c.Identity, maxIdentityLen)
	}
	if err := c.timing().Check(0); err != nil {
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return nil
}

func (c *Config) timing() lease.Timing {
	return lease.Timing{LeaseDuration: c.LeaseDuration, RenewDeadline: c.RenewDeadline, RetryPeriod: c.RetryPeriod}
}
