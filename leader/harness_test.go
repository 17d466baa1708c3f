package leader

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/internal/lease/leasetest"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
)

// Short durations keep the step counts small; their ratios are the defaults'.
const (
	testLease = 15 * time.Second
	testRenew = 10 * time.Second
	testRetry = 2 * time.Second
)

var leases = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "ns"}

// partition sits between one candidate and the server: it can drop the
// candidate's requests or hold them until released or cancelled.
type partition struct {
	next http.RoundTripper

	mu   sync.Mutex
	drop bool
	hold chan struct{} // non-nil: requests wait for it to close
	// refuse, if set, answers the requests it returns a Status for
	// (its code) in the server's stead, as RBAC would.
	refuse  func(r *http.Request) (code int, status string)
	holding int
	// holdWrites: with hold, only writes are held, and only once the
	// server has applied them (their replies are late).
	holdWrites bool
}

var errPartitioned = errors.New("partitioned")

func (p *partition) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	drop, hold := p.drop, p.hold
	if hold != nil && p.holdWrites && r.Method == http.MethodGet {
		hold = nil
	}
	late := hold != nil && p.holdWrites
	if hold != nil && !late {
		p.holding++
	}
	p.mu.Unlock()
	if drop {
		return nil, errPartitioned
	}
	if resp := p.refused(r); resp != nil {
		return resp, nil
	}
	if late {
		resp, err := p.next.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		p.mu.Lock()
		p.holding++ // counted once written: a test that sees it held sees the write
		p.mu.Unlock()
		defer func() { p.mu.Lock(); p.holding--; p.mu.Unlock() }()
		select {
		case <-hold:
			return resp, nil
		case <-r.Context().Done():
			resp.Body.Close()
			return nil, r.Context().Err()
		}
	}
	if hold != nil {
		defer func() { p.mu.Lock(); p.holding--; p.mu.Unlock() }()
		select {
		case <-hold:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return p.next.RoundTrip(r)
}

func (p *partition) refused(r *http.Request) *http.Response {
	p.mu.Lock()
	refuse := p.refuse
	p.mu.Unlock()
	if refuse == nil {
		return nil
	}
	code, status := refuse(r)
	if code == 0 {
		return nil
	}
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(strings.NewReader(status)),
	}
}

func (p *partition) setRefuse(f func(r *http.Request) (int, string)) {
	p.mu.Lock()
	p.refuse = f
	p.mu.Unlock()
}

// release lets held requests go and holds no more.
func (p *partition) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold != nil {
		close(p.hold)
		p.hold = nil
	}
}

// releaseHeld lets n's held requests go and waits until they have
// returned: settle counts a node with a held request as idle, so the
// clock must not move on before the replies are in.
func (h *harness) releaseHeld(n *node) {
	h.t.Helper()
	n.part.release()
	require.Eventually(h.t, func() bool { return n.part.held() == 0 }, waitTimeout, time.Millisecond, "held requests did not return")
}

func (p *partition) setDrop(v bool) { p.mu.Lock(); p.drop = v; p.mu.Unlock() }

func (p *partition) held() int { p.mu.Lock(); defer p.mu.Unlock(); return p.holding }

// term is one OnStartedLeading call as the monitor saw it.
type term struct {
	identity    string
	ctx         context.Context
	start, stop time.Time // by the fake clock; stop is zero while live
}

// harness runs candidates on one fake clock and one watchtest server. Its
// monitor checks, whenever a leader starts, that every earlier leader's
// context is already done: at no instant are two leaders acting.
type harness struct {
	t   *testing.T
	srv *watchtest.Server
	clk *clock.Fake

	// log gets every candidate's lines unless its Config says otherwise;
	// refuse is given to the partitions of candidates added from then on.
	logger *slog.Logger
	log    *leasetest.Log
	refuse func(r *http.Request) (int, string)

	mu         sync.Mutex
	terms      []*term
	violations []string
	nodes      []*node
}

type node struct {
	id   string
	e    *Elector
	part *partition
	stop context.CancelFunc
	done chan struct{}
	err  error

	mu   sync.Mutex
	wake time.Time // when the parked loop wakes; zero while running
}

func newHarness(t *testing.T) *harness {
	srv := watchtest.NewServer()
	srv.AddResource(watchtest.Leases)
	t.Cleanup(srv.Close)
	logger, log := leasetest.NewLogger()
	return &harness{t: t, srv: srv, clk: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), logger: logger, log: log}
}

// add starts a candidate; edit may change its Config first.
func (h *harness) add(id string, edit func(*Config)) *node {
	h.t.Helper()
	part := &partition{next: h.srv.Client().Transport, refuse: h.refuse}
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: h.srv.URL, QPS: -1, Transport: part})
	require.NoError(h.t, err)
	c.RetryMax = 0
	h.t.Cleanup(c.CloseIdleConnections)
	n := &node{id: id, part: part, done: make(chan struct{})}
	cfg := Config{
		Leases: c.Resource(leases), Name: "lock", Identity: id,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		Jitter: func() float64 { return 0 }, Clock: h.clk, Logger: h.logger,
		OnStartedLeading: func(ctx context.Context) { h.lead(id, ctx) },
	}
	if edit != nil {
		edit(&cfg)
	}
	n.e, err = New(cfg)
	require.NoError(h.t, err)
	n.e.parked = func(wake time.Time) { n.mu.Lock(); n.wake = wake; n.mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	h.mu.Lock()
	h.nodes = append(h.nodes, n)
	h.mu.Unlock()
	go func() {
		defer close(n.done)
		n.err = n.e.Run(ctx)
	}()
	h.t.Cleanup(func() {
		cancel()
		n.part.release()
		waitClosed(h.t, n.done, "candidate "+id+" to stop")
	})
	return n
}

// waitTimeout bounds every wait of a test: a broken behaviour fails it
// with its message in seconds rather than at go test's timeout.
const waitTimeout = 10 * time.Second

// waitClosed waits for ch to be closed, and fails the test if it is not
// within waitTimeout.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(waitTimeout):
		t.Fatalf("gave up waiting for %s after %v", what, waitTimeout)
	}
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
	tm := &term{identity: id, ctx: ctx, start: h.clk.Now()}
	h.terms = append(h.terms, tm)
	h.mu.Unlock()
	<-ctx.Done()
	h.mu.Lock()
	tm.stop = h.clk.Now()
	h.mu.Unlock()
}

// idle reports whether n waits for the clock (or for the test: a held
// request), or has returned from Run.
func (n *node) idle(now time.Time) bool {
	select {
	case <-n.done:
		return true
	default:
	}
	if n.part.held() > 0 {
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

// settle waits until every candidate has done what the current time
// allows and parked again.
func (h *harness) settle() {
	h.t.Helper()
	now := h.clk.Now()
	h.mu.Lock()
	nodes := append([]*node(nil), h.nodes...)
	h.mu.Unlock()
	require.Eventually(h.t, func() bool {
		for _, n := range nodes {
			if !n.idle(now) {
				return false
			}
		}
		_, started := h.live()
		return started
	}, 10*time.Second, time.Millisecond, "candidates did not settle")
	h.checkSafe()
}

// step moves the clock in steps of at most d until it has moved total,
// settling after each.
func (h *harness) step(total, d time.Duration) {
	h.t.Helper()
	for moved := time.Duration(0); moved < total; moved += d {
		h.clk.Step(min(d, total-moved))
		h.settle()
	}
}

func (h *harness) checkSafe() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(h.t, h.violations, "two leaders at once")
}

// leaders returns the identities of the live terms, once OnStartedLeading
// ran for every candidate that holds a term.
func (h *harness) leaders() []string {
	h.t.Helper()
	var ids []string
	require.Eventually(h.t, func() bool {
		var started bool
		ids, started = h.live()
		return started
	}, 10*time.Second, time.Millisecond)
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

func (h *harness) record() Record {
	h.t.Helper()
	data, err := h.srv.Get(watchtest.Leases, "ns", "lock")
	require.NoError(h.t, err)
	o, err := raw.NewObject(data)
	require.NoError(h.t, err)
	return lease.RecordOf(o)
}

func (h *harness) allTerms() []term {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]term, len(h.terms))
	for i, tm := range h.terms {
		out[i] = *tm
	}
	return out
}
