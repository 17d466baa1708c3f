package shard

import (
	"context"
	"errors"
	"fmt"
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
	"github.com/listwatch/listwatch/internal/lease/leasetest"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
)

// Short durations keep the step counts small; their ratios are the defaults'.
const (
	testLease = 15 * time.Second
	testRenew = 10 * time.Second
	testRetry = 2 * time.Second
	testKeys  = 60
)

var leases = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "ns"}

// partition sits between one member and the server: it can drop the
// member's requests or hold them until released or cancelled.
type partition struct {
	next http.RoundTripper

	mu        sync.Mutex
	drop      bool
	loseWrite bool          // updates reach the server, their replies are lost
	hold      chan struct{} // non-nil: requests wait for it to close
	// refuse, if set, answers the requests it returns a Status for
	// (its code) in the server's stead, as RBAC would.
	refuse  func(r *http.Request) (code int, status string)
	holding int
}

var errPartitioned = errors.New("partitioned")

func (p *partition) RoundTrip(r *http.Request) (*http.Response, error) {
	p.mu.Lock()
	drop, hold, lose := p.drop, p.hold, p.loseWrite && r.Method == http.MethodPut
	if hold != nil {
		p.holding++
	}
	p.mu.Unlock()
	if drop {
		return nil, errPartitioned
	}
	if resp := p.refused(r); resp != nil {
		return resp, nil
	}
	if hold != nil {
		defer func() { p.mu.Lock(); p.holding--; p.mu.Unlock() }()
		select {
		case <-hold:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	resp, err := p.next.RoundTrip(r)
	if err == nil && lose {
		resp.Body.Close()
		return nil, errReplyLost
	}
	return resp, err
}

var errReplyLost = errors.New("reply lost")

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

func (p *partition) setDrop(v bool) { p.mu.Lock(); p.drop = v; p.mu.Unlock() }

func (p *partition) setLoseWrite(v bool) { p.mu.Lock(); p.loseWrite = v; p.mu.Unlock() }

func (p *partition) held() int { p.mu.Lock(); defer p.mu.Unlock(); return p.holding }

// grantRecord is one key processed by one member, by the fake clock.
type grantRecord struct {
	id, key     string
	start, stop time.Time // stop is zero while held
}

// harness runs members on one fake clock and one watchtest server, with
// one worker per member and key that processes the key whenever the member
// hands it out and until the member asks for it back (maximal contention).
// Its monitor checks, whenever a worker starts on a key, that no worker of
// another member is on it: at no instant is a key processed twice.
type harness struct {
	t    *testing.T
	srv  *watchtest.Server
	clk  *clock.Fake
	keys []string

	// log gets every member's lines unless its Config says otherwise;
	// refuse is given to the partitions of members added from then on.
	logger *slog.Logger
	log    *leasetest.Log
	refuse func(r *http.Request) (int, string)

	mu         sync.Mutex
	holding    map[string]*grantRecord // key → the grant in progress
	grants     []*grantRecord
	violations []string
	nodes      []*node
}

type node struct {
	h    *harness
	id   string
	m    *Member
	part *partition
	stop context.CancelFunc
	done chan struct{}
	err  error

	mu       sync.Mutex
	wake     time.Time
	kicks    int
	dead     bool          // killed: its workers do nothing more
	frozen   bool          // its workers' reconciles are not in progress
	pause    chan struct{} // non-nil: workers finish their key only once it is closed
	workers  map[string]*worker
	workerWG sync.WaitGroup
}

// worker is a node's worker for one key, and what it waits on.
type worker struct {
	waitCh <-chan struct{} // waiting to try again: idle while open
	kctx   context.Context // holding: idle while not done (or paused)
	kerr   error           // the cause kctx had when the worker let go
	busy   bool            // between waits
}

func newHarness(t *testing.T) *harness {
	srv := watchtest.NewServer()
	srv.AddResource(watchtest.Leases)
	t.Cleanup(srv.Close)
	logger, log := leasetest.NewLogger()
	h := &harness{t: t, srv: srv, clk: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), holding: map[string]*grantRecord{}, logger: logger, log: log}
	for i := range testKeys {
		h.keys = append(h.keys, fmt.Sprintf("ns/key-%02d", i))
	}
	return h
}

// add starts a member and its workers; edit may change its Config first.
func (h *harness) add(id string, edit func(*Config)) *node {
	h.t.Helper()
	part := &partition{next: h.srv.Client().Transport, refuse: h.refuse}
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: h.srv.URL, QPS: -1, Transport: part})
	require.NoError(h.t, err)
	c.RetryMax = 0
	h.t.Cleanup(c.CloseIdleConnections)
	cfg := Config{
		Leases: c.Resource(leases), Group: "g", Identity: id,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		Clock: h.clk, Logger: h.logger,
	}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	require.NoError(h.t, err)
	n := &node{h: h, id: id, m: m, part: part, done: make(chan struct{}), workers: map[string]*worker{}}
	m.parked = func(wake time.Time, kicks int) { n.mu.Lock(); n.wake, n.kicks = wake, kicks; n.mu.Unlock() }
	ctx, cancel := context.WithCancel(context.Background())
	n.stop = cancel
	h.mu.Lock()
	h.nodes = append(h.nodes, n)
	h.mu.Unlock()
	for _, key := range h.keys {
		w := &worker{busy: true}
		n.workers[key] = w
		n.workerWG.Go(func() { n.work(key, w) })
	}
	go func() {
		defer close(n.done)
		n.err = m.Run(ctx)
	}()
	h.t.Cleanup(func() {
		// Unpause and unfreeze first: a member waits for its workers to
		// let go of their keys before Run returns, and a failed check must
		// print its message rather than hang (issue 26).
		cancel()
		n.unpause()
		n.part.release()
		waitClosed(h.t, n.done, "member "+id+" to stop")
		workers := make(chan struct{})
		go func() { n.workerWG.Wait(); close(workers) }()
		waitClosed(h.t, workers, "workers of "+id+" to stop")
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
		t.Errorf("gave up waiting for %s after %v", what, waitTimeout)
	}
}

// work processes key whenever the member hands it out, until the member
// stops or the node is killed.
func (n *node) work(key string, w *worker) {
	for {
		ch := n.m.changedChan()
		kctx, release, retry, err := n.m.tryAcquire(context.Background(), key)
		if errors.Is(err, ErrStopped) || n.isDead() {
			if release != nil {
				release()
			}
			n.setWait(w, nil, nil) // gone
			return
		}
		if retry != nil {
			ch = retry
		}
		if kctx == nil {
			n.setWait(w, ch, nil)
			<-ch
			continue
		}
		n.h.begin(n.id, key)
		n.setWait(w, nil, kctx)
		<-kctx.Done()
		n.mu.Lock()
		pause := n.pause
		n.mu.Unlock()
		if pause != nil {
			<-pause
		}
		if n.isDead() {
			n.setWait(w, nil, nil)
			return // a dead process neither works nor releases
		}
		n.mu.Lock()
		w.kerr = context.Cause(kctx)
		n.mu.Unlock()
		n.h.end(n.id, key) // after a freeze, holding already moved on
		release()
	}
}

func (n *node) setWait(w *worker, ch <-chan struct{}, kctx context.Context) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w.waitCh, w.kctx, w.busy = ch, kctx, false
}

func (n *node) isDead() bool { n.mu.Lock(); defer n.mu.Unlock(); return n.dead }

// pauseWork makes the node's workers hold what they hold past the end of
// its context, as a reconcile that takes long would.
func (n *node) pauseWork() { n.mu.Lock(); n.pause = make(chan struct{}); n.mu.Unlock() }

func (n *node) unpause() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.pause != nil {
		close(n.pause)
		n.pause = nil
	}
}

// kill ends the node as SIGKILL would: no request of it gets through any
// more, and its workers stop where they are (what they held is no longer
// processed by anyone).
func (n *node) kill() {
	n.part.setDrop(true)
	n.mu.Lock()
	n.dead = true
	n.mu.Unlock()
	n.h.mu.Lock()
	for key, g := range n.h.holding {
		if g.id == n.id {
			g.stop = n.h.clk.Now()
			delete(n.h.holding, key)
		}
	}
	n.h.mu.Unlock()
	n.unpause()
}

// freeze stops the node as SIGSTOP would: its requests hang and its
// workers stand still on what they hold, processing nothing meanwhile.
func (n *node) freeze() {
	n.part.mu.Lock()
	n.part.hold = make(chan struct{})
	n.part.mu.Unlock()
	n.pauseWork()
	n.h.mu.Lock()
	for key, g := range n.h.holding {
		if g.id == n.id {
			g.stop = n.h.clk.Now()
			delete(n.h.holding, key)
		}
	}
	n.h.mu.Unlock()
	n.mu.Lock()
	n.frozen = true
	n.mu.Unlock()
}

// thaw resumes a frozen node: its hung requests go through, its workers
// look at their contexts and let go.
func (n *node) thaw() {
	n.part.release()
	n.mu.Lock()
	n.frozen = false
	n.mu.Unlock()
	n.unpause()
}

func (h *harness) begin(id, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.holding[key]; g != nil {
		h.violations = append(h.violations, fmt.Sprintf("%s: %s started while %s holds it (since %v)", key, id, g.id, g.start))
	}
	g := &grantRecord{id: id, key: key, start: h.clk.Now()}
	h.holding[key] = g
	h.grants = append(h.grants, g)
}

func (h *harness) end(id, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.holding[key]; g != nil && g.id == id {
		g.stop = h.clk.Now()
		delete(h.holding, key)
	}
}

// idle reports whether n waits for the clock, for a held request or for
// the test, in its loop, its watchdog and every worker.
func (n *node) idle(now time.Time) bool {
	select {
	case <-n.done:
		return n.workersIdle()
	default:
	}
	if n.part.held() > 0 {
		return n.workersIdle()
	}
	n.mu.Lock()
	wake, kicks := n.wake, n.kicks
	n.mu.Unlock()
	m := n.m
	m.mu.Lock()
	loopIdle := wake.After(now) && m.kicks == kicks
	watchdogIdle := len(m.renewal) == 0 && (m.suspended || m.renewed.Add(m.cfg.RenewDeadline).After(now))
	m.mu.Unlock()
	return loopIdle && watchdogIdle && n.workersIdle()
}

func (n *node) workersIdle() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.dead {
		return true
	}
	for _, w := range n.workers {
		switch {
		case w.busy:
			return false
		case w.kctx != nil:
			if w.kctx.Err() != nil && n.pause == nil {
				return false
			}
		case w.waitCh != nil:
			select {
			case <-w.waitCh:
				return false
			default:
			}
		}
	}
	return true
}

// settle waits until every node has done what the current time allows.
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
		return true
	}, 10*time.Second, time.Millisecond, "members did not settle")
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
	require.Empty(h.t, h.violations, "a key processed by two members at once")
}

// holders returns key → the member processing it now.
func (h *harness) holders() map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]string{}
	for key, g := range h.holding {
		out[key] = g.id
	}
	return out
}

// firstGrant returns when id first started on key at or after since.
func (h *harness) firstGrant(id, key string, since time.Time) (time.Time, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.grants {
		if g.id == id && g.key == key && !g.start.Before(since) {
			return g.start, true
		}
	}
	return time.Time{}, false
}

// want returns key → owner among members, for every key.
func (h *harness) want(members ...string) map[string]string {
	out := map[string]string{}
	for _, key := range h.keys {
		out[key] = Owner(key, members)
	}
	return out
}

// renewTime is the renewTime of id's lease, as the server holds it.
func (h *harness) renewTime(id string) time.Time {
	h.t.Helper()
	data, err := h.srv.Get(watchtest.Leases, "ns", "g-"+id)
	require.NoError(h.t, err)
	o, err := raw.NewObject(data)
	require.NoError(h.t, err)
	t, err := time.Parse(time.RFC3339Nano, o.Get("spec.renewTime").String())
	require.NoError(h.t, err)
	return t
}

// changedChan is the channel the member's next change closes.
func (m *Member) changedChan() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}
