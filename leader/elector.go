package leader

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/listwatch/listwatch/internal/lease"
)

// ErrLost is what Run returns when this candidate led and then lost the
// lease (it could not renew within RenewDeadline, or another identity took
// it). Processes usually exit on it and start again as a fresh candidate.
var ErrLost = errors.New("leadership lost")

// ErrNotServed is what Run returns when the server does not serve
// coordination.k8s.io/v1 leases: no retry can make the election work.
var ErrNotServed = lease.ErrNotServed

// errDeadline cancels the leader's context when RenewDeadline passed.
var errDeadline = errors.New("lease not renewed within RenewDeadline")

// Elector takes part in one election. Create it with New, then Run it.
type Elector struct {
	cfg   Config
	lease lease.Lease
	rep   *lease.Reporter

	mu       sync.Mutex
	leading  bool      // from acquiring until OnStartedLeading returned
	renewed  time.Time // when the last successful take or renewal was sent
	reported string    // the holder last passed to OnNewLeader

	// parked, set by tests, is called when the loop has armed its timer
	// and is about to wait on it: the elector is idle until the clock
	// reaches wake (or, leading, its renew deadline).
	parked func(wake time.Time)
}

// New fills in the defaults of cfg, checks it, and returns an Elector.
func New(cfg Config) (*Elector, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Elector{cfg: cfg, lease: lease.Lease{
		Client:   cfg.Leases,
		Name:     cfg.Name,
		Identity: cfg.Identity,
		Duration: cfg.LeaseDuration,
		Clock:    cfg.Clock,
	}, rep: &lease.Reporter{
		Logger: cfg.Logger, OnError: cfg.OnError, Clock: cfg.Clock,
		Who: "leader election", Attrs: []any{"identity", cfg.Identity},
		Verbs: "get, create and update",
	}}, nil
}

// Run competes for the lease until ctx is cancelled (it returns nil) or
// until it led and lost the lease (it returns an error wrapping ErrLost).
// When it leads, it returns only after OnStartedLeading has returned. It
// returns at once, with an error wrapping ErrNotServed, when the server
// does not serve leases; every other failure is reported (Logger,
// OnError) and retried, since RBAC granted later cures a 403.
func (e *Elector) Run(ctx context.Context) error {
	sent, err := e.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	err = e.lead(ctx, sent)
	if ctx.Err() != nil && e.cfg.ReleaseOnCancel {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.RenewDeadline)
		defer cancel()
		if rerr := e.lease.Release(rctx); rerr != nil {
			e.rep.Failed(rerr)
			return rerr
		}
		return nil
	}
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrLost, err)
}

// Leader is the holder in the last lease record this candidate saw.
func (e *Elector) Leader() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.reported
}

// Check is a health check: it fails while this candidate is still leading
// (OnStartedLeading has not returned) although its last renewal is more
// than RenewDeadline + tolerance old, that is when the leader goes on
// acting after it should have stopped.
func (e *Elector) Check(tolerance time.Duration) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.leading {
		return nil
	}
	if late := e.cfg.Clock.Since(e.renewed) - e.cfg.RenewDeadline; late > tolerance {
		return fmt.Errorf("leader %s: renewal overdue by %v (tolerance %v)", e.cfg.Identity, late, tolerance)
	}
	return nil
}

// acquire tries to take the lease every RetryPeriod plus jitter until it
// succeeds or ctx is cancelled, or the server turns out not to serve
// leases (an error wrapping ErrNotServed). A take confirmed RenewDeadline or more
// after it was sent does not count: others may have seen it, waited
// LeaseDuration and taken the lease meanwhile; the next try reads again.
func (e *Elector) acquire(ctx context.Context) (time.Time, error) {
	for {
		sent, err := e.lease.Try(ctx)
		e.report()
		e.account(err)
		if lease.NotServed(err) {
			return time.Time{}, fmt.Errorf("leader election on lease %s: %w: %w", e.cfg.Name, ErrNotServed, err)
		}
		if err == nil && e.cfg.Clock.Now().Before(sent.Add(e.cfg.RenewDeadline)) {
			return sent, nil
		}
		wait := e.cfg.RetryPeriod + time.Duration(e.cfg.Jitter()*e.cfg.JitterFactor*float64(e.cfg.RetryPeriod))
		// Try again the moment the holder's lease expires, not up to a
		// RetryPeriod later (decision 16).
		if until, ok := e.lease.ExpiresIn(); ok && until > 0 {
			wait = min(wait, until)
		}
		if !e.sleep(ctx, wait) {
			return time.Time{}, ctx.Err()
		}
	}
}

// lead runs OnStartedLeading and renews the lease every RetryPeriod. A
// watchdog on the local clock cancels the leader's context RenewDeadline
// after the last successful renewal was sent, whatever the renewal in
// flight is doing; other candidates cannot take the lease before
// LeaseDuration after that send. lead returns once OnStartedLeading has.
func (e *Elector) lead(ctx context.Context, sent time.Time) error {
	leadCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	e.mu.Lock()
	e.leading, e.renewed = true, sent
	e.mu.Unlock()

	watchdog := e.cfg.Clock.NewTimer(sent.Add(e.cfg.RenewDeadline).Sub(e.cfg.Clock.Now()))
	defer watchdog.Stop()
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.cfg.OnStartedLeading(leadCtx)
	}()
	go func() {
		select {
		case <-watchdog.C():
			cancel(errDeadline)
		case <-leadCtx.Done():
		}
	}()

	e.renew(leadCtx, cancel, watchdog)
	<-done
	watchdog.Stop()
	e.mu.Lock()
	e.leading = false
	e.mu.Unlock()
	if e.cfg.OnStoppedLeading != nil {
		e.cfg.OnStoppedLeading()
	}
	return context.Cause(leadCtx)
}

// renew keeps the lease until leadCtx ends, moving the watchdog forward on
// each successful renewal.
func (e *Elector) renew(leadCtx context.Context, cancel context.CancelCauseFunc, watchdog interface {
	Reset(time.Duration) bool
}) {
	for e.sleep(leadCtx, e.cfg.RetryPeriod) {
		sent, err := e.lease.Try(leadCtx)
		e.report()
		e.account(err)
		switch {
		case errors.Is(err, lease.ErrHeld):
			cancel(err)
			return
		case err != nil:
			continue // retry until the watchdog fires
		}
		e.mu.Lock()
		// Reset reports false when the watchdog already fired: leadership
		// ended even though this renewal got through.
		pending := watchdog.Reset(sent.Add(e.cfg.RenewDeadline).Sub(e.cfg.Clock.Now()))
		if pending {
			e.renewed = sent
		}
		e.mu.Unlock()
		if !pending {
			cancel(errDeadline)
			return
		}
	}
}

// account reports the outcome of a try: a lease found held by another is
// no failed request.
func (e *Elector) account(err error) {
	if err == nil || errors.Is(err, lease.ErrHeld) {
		e.rep.Succeeded()
		return
	}
	e.rep.Failed(err)
}

// report tells OnNewLeader about a holder not reported before.
func (e *Elector) report() {
	h := e.lease.Holder()
	e.mu.Lock()
	changed := h != "" && h != e.reported
	if changed {
		e.reported = h
	}
	e.mu.Unlock()
	if changed && e.cfg.OnNewLeader != nil {
		e.cfg.OnNewLeader(h)
	}
}

// sleep waits d on the clock; false means ctx ended first.
func (e *Elector) sleep(ctx context.Context, d time.Duration) bool {
	t := e.cfg.Clock.NewTimer(d)
	defer t.Stop()
	if e.parked != nil {
		e.parked(e.cfg.Clock.Now().Add(d))
	}
	select {
	case <-t.C():
		return ctx.Err() == nil
	case <-ctx.Done():
		return false
	}
}
