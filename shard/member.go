package shard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/processor"
)

// Member is one replica's membership in a group. Create it with New, Run
// it, and ask it before processing a key (Acquire) and which keys to cache
// (Source, Owns).
type Member struct {
	cfg Config
	own lease.Lease
	rep *lease.Reporter
	// failed is set when a request of the current round failed.
	failed bool
	// peers are the group's other leases by name, as the loop observed them.
	peers map[string]*lease.Lease

	mu sync.Mutex
	// view is the live members by this member's observation, sorted.
	view []string
	// acked is the set published in the own lease's MembersAnnotation by
	// the last successful write; nil owns nothing.
	acked []string
	// checked is true once a read of the group's leases begun after the
	// last change of what the others may believe of this member (a new
	// acked set, a new term) succeeded: renew clears it on such a change,
	// and observe, which the loop runs after renew, sets it.
	checked bool
	// unsure is true from a failed write of a new set until a write
	// succeeds: the failed one may have reached the server all the same,
	// so the others may be reading a set other than acked.
	unsure bool
	// claims is, for each other holder of a lease of the group, the set it
	// acknowledged: by it, it may be processing the keys it owns there.
	claims map[string][]string
	// renewed is when the last successful renewal was sent; suspended is
	// true from RenewDeadline after that until the next success.
	renewed   time.Time
	suspended bool
	// term ends when renewals fail for RenewDeadline or Run returns; the
	// contexts of held keys derive from it.
	term    context.Context
	endTerm context.CancelCauseFunc
	held    map[*grant]struct{}
	running bool // Run was called
	stopped bool
	// changed is closed (and replaced) whenever what Acquire waits on may
	// have changed.
	changed chan struct{}

	// kicks counts the loop's wake-ups for a set to publish (a key was
	// released), kicksSeen those it has acted on; kick wakes it.
	kicks, kicksSeen int
	kick             chan struct{}
	renewal          chan struct{} // the watchdog has a new deadline

	// parked, set by tests, is called (m.mu held) when the loop is about to
	// wait until wake, having acted on kicks kicks.
	parked func(wake time.Time, kicks int)
}

// grant is a key handed out by Acquire and not yet released.
type grant struct {
	key    string
	cancel context.CancelCauseFunc
}

// Errors of Acquire, and causes of the contexts it returns.
var (
	// ErrNotOwned: the key belongs to another member by this member's view.
	ErrNotOwned = errors.New("key is owned by another member")
	// ErrOverdue: the own lease was not renewed within RenewDeadline.
	ErrOverdue = errors.New("membership lease not renewed within RenewDeadline")
)

// errStopped is what Run and Acquire return once Run has returned or is
// returning, and the cause of the contexts Acquire handed out then.
var errStopped = fmt.Errorf("member %w", processor.ErrStopped)

// ErrNotServed is what Run returns when the server does not serve
// coordination.k8s.io/v1 leases: no retry can make the membership work.
var ErrNotServed = lease.ErrNotServed

// New fills in the defaults of cfg, checks it, and returns a Member.
func New(cfg Config) (*Member, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Member{
		cfg: cfg,
		own: lease.Lease{
			Client: cfg.Leases, Name: cfg.Name, Identity: cfg.Identity,
			Duration: cfg.LeaseDuration, Clock: cfg.Clock,
			Labels: map[string]string{GroupLabel: cfg.Group},
		},
		rep: &lease.Reporter{
			Logger: cfg.Logger, OnError: cfg.OnError, Clock: cfg.Clock,
			Who: "shard member", Attrs: []any{"group", cfg.Group, "identity", cfg.Identity},
			Verbs: "get, list, create and update",
		},
		peers:     map[string]*lease.Lease{},
		claims:    map[string][]string{},
		suspended: true,
		held:      map[*grant]struct{}{},
		changed:   make(chan struct{}),
		kick:      make(chan struct{}, 1),
		renewal:   make(chan struct{}, 1),
	}
	m.term, m.endTerm = context.WithCancelCause(context.Background())
	m.endTerm(ErrOverdue) // no term before the first renewal
	return m, nil
}

// Members returns the live members by this member's last observation.
func (m *Member) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.view)
}

// Owns reports whether key belongs to this member by its current view.
func (m *Member) Owns(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Owner(key, m.view) == m.cfg.Identity
}

// Run keeps the membership until ctx is done: every RetryPeriod it renews
// its lease (publishing the set it acknowledges) and reads the group's
// leases. When ctx is done it stops handing out keys, waits for the held
// ones to be released (until RenewDeadline after its last renewal), and
// then gives its lease up so its keys move at the others' next round.
// Failed requests are reported (Logger, OnError) and retried, since RBAC
// granted later cures a 403; but when the server does not serve leases,
// Run leaves at once and returns an error wrapping ErrNotServed.
func (m *Member) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.running || m.stopped {
		m.mu.Unlock()
		return errStopped
	}
	m.running = true
	m.mu.Unlock()
	// stop ends the watchdog also when Run returns on its own.
	ctx, stop := context.WithCancel(ctx)
	watchdog := make(chan struct{})
	go func() { defer close(watchdog); m.watch(ctx) }()
	defer func() { <-watchdog }()
	defer stop()
	var fatal error
	for {
		m.seeKicks()
		m.failed = false
		published, err := m.renew(ctx)
		if ctx.Err() != nil || err != nil {
			fatal = err
			break
		}
		wake, err := m.observe(ctx)
		if err != nil {
			fatal = err
			break
		}
		if !m.failed {
			m.rep.Succeeded()
		}
		if published && m.toPublish() != nil {
			continue // a changed view with nothing to drain: publish it now
		}
		if !m.sleep(ctx, wake) {
			break
		}
	}
	if fatal != nil {
		return errors.Join(fatal, m.leave())
	}
	return m.leave()
}

// notServed turns a failure that shows the Lease API missing into Run's
// error.
func (m *Member) notServed(err error) error {
	if !lease.NotServed(err) {
		return nil
	}
	return fmt.Errorf("shard member %s of group %s: %w: %w", m.cfg.Identity, m.cfg.Group, ErrNotServed, err)
}

// renew takes or renews the own lease, publishing the view as acknowledged
// once no held key is owned by another member under it. It reports
// whether the write succeeded, and an error when it never will.
func (m *Member) renew(ctx context.Context) (bool, error) {
	next := m.toPublish()
	ack := m.ackedValue()
	if next != nil {
		ack = formatMembers(next)
	}
	m.own.Annotations = map[string]string{MembersAnnotation: ack}
	sent, err := m.own.Try(ctx)
	if err != nil {
		if next != nil {
			m.mu.Lock()
			m.unsure = true
			m.mu.Unlock()
		}
		m.report(err)
		return false, m.notServed(err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if next != nil && !slices.Equal(next, m.acked) || m.unsure {
		if next != nil {
			m.acked = next
		}
		m.unsure = false
		m.checked = false
	}
	m.renewed = sent
	if m.suspended && m.cfg.Clock.Now().Before(sent.Add(m.cfg.RenewDeadline)) {
		m.suspended = false
		m.term, m.endTerm = context.WithCancelCause(context.Background())
		m.checked = false
	}
	select {
	case m.renewal <- struct{}{}:
	default:
	}
	m.broadcast()
	return true, nil
}

func (m *Member) ackedValue() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return formatMembers(m.acked)
}

// toPublish returns the view if it differs from the acknowledged set and
// no held key belongs to another member under it; nil otherwise.
func (m *Member) toPublish() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.view == nil || slices.Equal(m.view, m.acked) {
		return nil
	}
	for g := range m.held {
		if Owner(g.key, m.view) != m.cfg.Identity {
			return nil
		}
	}
	return slices.Clone(m.view)
}

// observe reads the group's leases, evicts the holders it saw expire, and
// updates the view, the claims and whether they were read after the last
// publication. It returns when the loop should wake: after RetryPeriod, or
// at the first expiry it foresees if that is sooner; and an error when the
// group can never be read.
func (m *Member) observe(ctx context.Context) (time.Time, error) {
	now := m.cfg.Clock.Now()
	wake := now.Add(m.cfg.RetryPeriod)
	page, err := m.cfg.Leases.List(ctx, httpwatch.ListOptions{LabelSelector: GroupLabel + "=" + m.cfg.Group})
	if err != nil {
		err = fmt.Errorf("read group %s: %w", m.cfg.Group,
			&lease.RequestError{Verb: "list", Namespace: m.cfg.Leases.Resource().Namespace, Err: err})
		m.report(err)
		return wake, m.notServed(err)
	}
	live := []string{}
	claims := map[string][]string{}
	seen := map[string]bool{}
	for _, o := range page.Items {
		name := o.Name()
		seen[name] = true
		if name == m.cfg.Name {
			if lease.RecordOf(o).HolderIdentity == m.cfg.Identity {
				live = append(live, m.cfg.Identity)
			}
			continue
		}
		p := m.peers[name]
		if p == nil {
			p = &lease.Lease{Client: m.cfg.Leases, Name: name, Identity: m.cfg.Identity, Clock: m.cfg.Clock}
			m.peers[name] = p
		}
		p.Observe(o)
		until, held := p.ExpiresIn()
		if held && until <= 0 {
			err := p.Evict(ctx)
			if err == nil {
				continue // cleared: it no longer claims anything
			}
			m.report(err)
		}
		if !held {
			continue
		}
		holder := p.Holder()
		claims[holder] = parseMembers(p.Observed().Annotations()[MembersAnnotation])
		if until > 0 {
			live = append(live, holder)
			wake = earliest(wake, m.cfg.Clock.Now().Add(until))
		}
	}
	for name, p := range m.peers {
		if seen[name] {
			continue
		}
		// A lease deleted under a live holder says nothing of whether it
		// stopped: it keeps its claim until it expires as if unchanged.
		if until, held := p.ExpiresIn(); held && until > 0 {
			claims[p.Holder()] = parseMembers(p.Observed().Annotations()[MembersAnnotation])
			live = append(live, p.Holder())
			wake = earliest(wake, m.cfg.Clock.Now().Add(until))
			continue
		}
		delete(m.peers, name)
	}
	slices.Sort(live)
	live = slices.Compact(live)
	m.update(live, claims)
	return wake, nil
}

// report hands a failed request to the Reporter; the loop retries it next
// round.
func (m *Member) report(err error) {
	m.failed = true
	m.rep.Failed(err)
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// update installs what observe read; a changed view cancels the contexts
// of held keys that now belong to others and is reported to OnChange.
func (m *Member) update(live []string, claims map[string][]string) {
	m.mu.Lock()
	m.claims = claims
	m.checked = true
	changed := !slices.Equal(live, m.view)
	if changed {
		m.view = live
		for g := range m.held {
			if Owner(g.key, live) != m.cfg.Identity {
				g.cancel(ErrNotOwned)
			}
		}
	}
	m.broadcast()
	m.mu.Unlock()
	if changed && m.cfg.OnChange != nil {
		m.cfg.OnChange(slices.Clone(live))
	}
}

// broadcast wakes every Acquire waiting; m.mu is held.
func (m *Member) broadcast() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// seeKicks notes that the iteration starting acts on every kick so far.
func (m *Member) seeKicks() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.kicksSeen = m.kicks
	select {
	case <-m.kick:
	default:
	}
}

// kickLoop wakes the loop; m.mu is held.
func (m *Member) kickLoop() {
	m.kicks++
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// sleep waits until wake, a kick or the end of ctx; false means ctx ended.
func (m *Member) sleep(ctx context.Context, wake time.Time) bool {
	m.mu.Lock()
	if m.kicks != m.kicksSeen {
		m.kicksSeen = m.kicks
		m.mu.Unlock()
		return ctx.Err() == nil
	}
	t := m.cfg.Clock.NewTimer(wake.Sub(m.cfg.Clock.Now()))
	defer t.Stop()
	if m.parked != nil {
		m.parked(wake, m.kicksSeen)
	}
	m.mu.Unlock()
	select {
	case <-t.C():
	case <-m.kick:
	case <-ctx.Done():
		return false
	}
	return true
}

// watch is the watchdog: RenewDeadline after the last successful renewal
// was sent, whatever the loop is doing, it ends the term, so held keys'
// contexts are cancelled and no key is handed out until a renewal gets
// through and the group's leases are read again.
func (m *Member) watch(ctx context.Context) {
	for {
		m.mu.Lock()
		deadline, suspended := m.renewed.Add(m.cfg.RenewDeadline), m.suspended
		if !suspended && !m.cfg.Clock.Now().Before(deadline) {
			m.suspended, m.checked = true, false
			m.endTerm(ErrOverdue)
			m.broadcast()
			suspended = true
		}
		m.mu.Unlock()
		if !m.waitDeadline(ctx, suspended, deadline) {
			return
		}
	}
}

// waitDeadline waits for the deadline (unless suspended) or a renewal;
// false means ctx ended.
func (m *Member) waitDeadline(ctx context.Context, suspended bool, deadline time.Time) bool {
	var fire <-chan time.Time
	if !suspended {
		t := m.cfg.Clock.NewTimer(deadline.Sub(m.cfg.Clock.Now()))
		defer t.Stop()
		fire = t.C()
	}
	select {
	case <-fire:
	case <-m.renewal:
	case <-ctx.Done():
		return false
	}
	return true
}

// leave ends the membership: no key is handed out any more, held keys'
// contexts are cancelled, and once they are all released (by RenewDeadline
// after the last renewal at the latest) the lease is given up.
func (m *Member) leave() error {
	m.mu.Lock()
	m.stopped = true
	m.endTerm(errStopped)
	for g := range m.held {
		g.cancel(errStopped)
	}
	m.broadcast()
	deadline := m.renewed.Add(m.cfg.RenewDeadline)
	m.mu.Unlock()
	t := m.cfg.Clock.NewTimer(deadline.Sub(m.cfg.Clock.Now()))
	defer t.Stop()
	for {
		m.mu.Lock()
		n, changed := len(m.held), m.changed
		m.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-changed:
		case <-t.C():
			return fmt.Errorf("leave group %s: %d keys still held at the renew deadline; lease %s left to expire", m.cfg.Group, n, m.cfg.Name)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.cfg.RenewDeadline)
	defer cancel()
	return m.own.Release(ctx)
}
