package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// Short durations keep the step counts small; their ratios are the defaults'.
const (
	testLease = 15 * time.Second
	testRenew = 10 * time.Second
	testRetry = 2 * time.Second
	testKeys  = 60
)

// grantRecord is one key processed by one member, by the fake clock.
type grantRecord struct {
	id, key     string
	start, stop time.Time // stop is zero while held
}

// harness runs members in a leasetest.Cluster, with one worker per member
// and key that processes the key whenever the member hands it out and
// until the member asks for it back (maximal contention). Its monitor
// checks, whenever a worker starts on a key, that no worker of another
// member is on it: at no instant is a key processed twice.
type harness struct {
	*leasetest.Cluster
	keys []string

	mu         sync.Mutex
	holding    map[string]*grantRecord // key → the grant in progress
	grants     []*grantRecord
	violations []string
}

type node struct {
	*leasetest.Proc
	h    *harness
	id   string
	m    *Member
	part *leasetest.Partition

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
	h := &harness{Cluster: leasetest.NewCluster(t), holding: map[string]*grantRecord{}}
	h.Check = h.checkSafe
	for i := range testKeys {
		h.keys = append(h.keys, fmt.Sprintf("ns/key-%02d", i))
	}
	return h
}

// add starts a member and its workers; edit may change its Config first.
func (h *harness) add(id string, edit func(*Config)) *node {
	h.T.Helper()
	leases, part := h.Connect()
	cfg := Config{
		Leases: leases, Group: "g", Identity: id,
		LeaseDuration: testLease, RenewDeadline: testRenew, RetryPeriod: testRetry,
		Clock: h.Clock, Logger: h.Logger,
	}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	require.NoError(h.T, err)
	n := &node{h: h, id: id, m: m, part: part, workers: map[string]*worker{}}
	m.parked = func(wake time.Time, kicks int) { n.mu.Lock(); n.wake, n.kicks = wake, kicks; n.mu.Unlock() }
	for _, key := range h.keys {
		w := &worker{busy: true}
		n.workers[key] = w
		n.workerWG.Go(func() { n.work(key, w) })
	}
	h.T.Cleanup(func() { testwait.Group(h.T, &n.workerWG, "workers of "+id+" to stop") }) // after Run has returned
	// Unpause and unfreeze before waiting for Run: a member waits for its
	// workers to let go of their keys before Run returns, and a failed
	// check must print its message rather than hang.
	n.Proc = h.Go(leasetest.Process{Name: "member " + id, Run: m.Run, Idle: n.idle,
		Unblock: func() { n.unpause(); part.Release() }})
	return n
}

// work processes key whenever the member hands it out, until the member
// stops or the node is killed.
func (n *node) work(key string, w *worker) {
	for {
		ch := n.m.changedChan()
		kctx, release, retry, err := n.m.tryAcquire(context.Background(), key)
		if errors.Is(err, processor.ErrStopped) || n.isDead() {
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
	n.part.SetDrop(true)
	n.mu.Lock()
	n.dead = true
	n.mu.Unlock()
	n.h.mu.Lock()
	for key, g := range n.h.holding {
		if g.id == n.id {
			g.stop = n.h.Clock.Now()
			delete(n.h.holding, key)
		}
	}
	n.h.mu.Unlock()
	n.unpause()
}

// freeze stops the node as SIGSTOP would: its requests hang and its
// workers stand still on what they hold, processing nothing meanwhile.
func (n *node) freeze() {
	n.part.Hold()
	n.pauseWork()
	n.h.mu.Lock()
	for key, g := range n.h.holding {
		if g.id == n.id {
			g.stop = n.h.Clock.Now()
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
	n.part.Release()
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
	g := &grantRecord{id: id, key: key, start: h.Clock.Now()}
	h.holding[key] = g
	h.grants = append(h.grants, g)
}

func (h *harness) end(id, key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if g := h.holding[key]; g != nil && g.id == id {
		g.stop = h.Clock.Now()
		delete(h.holding, key)
	}
}

// idle reports whether n waits for the clock, for a held request or for
// the test, in its loop, its watchdog and every worker.
func (n *node) idle(now time.Time) bool {
	select {
	case <-n.Done:
		return n.workersIdle()
	default:
	}
	if n.part.Held() > 0 {
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

func (h *harness) checkSafe() {
	h.T.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	require.Empty(h.T, h.violations, "a key processed by two members at once")
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
	h.T.Helper()
	rec := lease.RecordOf(h.Lease("g-" + id))
	require.False(h.T, rec.RenewTime.IsZero(), "renewTime of g-%s", id)
	return rec.RenewTime
}

// changedChan is the channel the member's next change closes.
func (m *Member) changedChan() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.changed
}
