package leader

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// Short durations keep the step counts small; their ratios are the defaults'.
const (
	testLease = 15 * time.Second
	testRenew = 10 * time.Second
	testRetry = 2 * time.Second
)

// term is one OnStartedLeading call as the monitor saw it.
type term struct {
	identity    string
	ctx         context.Context
	start, stop time.Time // by the fake clock; stop is zero while live
}

// harness runs candidates in a leasetest.Cluster. Its monitor checks,
// whenever a leader starts, that every earlier leader's context is
// already done: at no instant are two leaders acting.
type harness struct {
	*leasetest.Cluster

	mu         sync.Mutex
	terms      []*term
	violations []string
	nodes      []*node
}

type node struct {
	*leasetest.Proc
	id   string
	e    *Elector
	part *leasetest.Partition

	mu   sync.Mutex
	wake time.Time // when the parked loop wakes; zero while running
}

func newHarness(t *testing.T) *harness {
	h := &harness{Cluster: leasetest.NewCluster(t)}
	h.Ready = func() bool { _, started := h.live(); return started }
	h.Check = h.checkSafe
	return h
}

// add starts a candidate; edit may change its Config first.
func (h *harness) add(id string, edit func(*Config)) *node {
	h.T.Helper()
	leases, part := h.Connect()
	n := &node{id: id, part: part}
	cfg := Config{
		Leases: leases, Name: "lock", Identity: id,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		Jitter: func() float64 { return 0 }, Clock: h.Clock, Logger: h.Logger,
		OnStartedLeading: func(ctx context.Context) { h.lead(id, ctx) },
	}
	if edit != nil {
		edit(&cfg)
	}
	var err error
	n.e, err = New(cfg)
	require.NoError(h.T, err)
	n.e.parked = func(wake time.Time) { n.mu.Lock(); n.wake = wake; n.mu.Unlock() }
	h.mu.Lock()
	h.nodes = append(h.nodes, n)
	h.mu.Unlock()
	n.Proc = h.Go(leasetest.Process{Name: "candidate " + id, Run: n.e.Run, Idle: n.idle, Unblock: part.Release})
	return n
}

// lead is every candidate's OnStartedLeading: it records the term and
// holds it until the context ends.
func (h *harness) lead(id string, ctx context.Context) {
	h.mu.Lock()
	for _, tm := range h.terms {
		if tm.ctx.Err() == nil {
			h.violations = append(h.violations, id+" started while "+tm.identity+" still leads")
		}
	}
	tm := &term{identity: id, ctx: ctx, start: h.Clock.Now()}
	h.terms = append(h.terms, tm)
	h.mu.Unlock()
	<-ctx.Done()
	h.mu.Lock()
	tm.stop = h.Clock.Now()
	h.mu.Unlock()
}

// idle reports whether n waits for the clock (or for the test: a held
// request), or has returned from Run.
func (n *node) idle(now time.Time) bool {
	select {
	case <-n.Done:
		return true
	default:
	}
	if n.part.Held() > 0 {
		return true
	}
	n.mu.Lock()
	wake := n.wake
	n.mu.Unlock()
	n.e.mu.Lock()
	overdue := n.e.leading && !n.e.renewed.Add(n.e.cfg.RenewDeadline).After(now)
	n.e.mu.Unlock()
	return wake.After(now) && !overdue
}

func (h *harness) checkSafe() {
	h.T.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(h.T, h.violations, "two leaders at once")
}

// leaders returns the identities of the live terms, once OnStartedLeading
// ran for every candidate that holds a term.
func (h *harness) leaders() []string {
	h.T.Helper()
	var ids []string
	require.Eventually(h.T, func() bool {
		var started bool
		ids, started = h.live()
		return started
	}, testwait.Timeout, time.Millisecond)
	return ids
}

// live returns the identities of the live terms, and whether their number
// is that of the leading electors: whether every OnStartedLeading began (and
// its start time was recorded before the clock moves on).
func (h *harness) live() (ids []string, started bool) {
	h.mu.Lock()
	nodes := h.nodes
	h.mu.Unlock()
	want := 0
	for _, n := range nodes {
		n.e.mu.Lock()
		if n.e.leading {
			want++
		}
		n.e.mu.Unlock()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, tm := range h.terms {
		if tm.ctx.Err() == nil {
			ids = append(ids, tm.identity)
		}
	}
	return ids, len(ids) == want
}

func (h *harness) record() Record { return lease.RecordOf(h.Lease("lock")) }

func (h *harness) allTerms() []term {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]term, len(h.terms))
	for i, tm := range h.terms {
		out[i] = *tm
	}
	return out
}
