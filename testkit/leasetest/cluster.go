package leasetest

import (
	"context"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Namespace holds the leases of a Cluster; Resource addresses them.
const Namespace = "ns"

var Resource = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: Namespace}

// Cluster runs processes that share leases (candidates, members) against
// one watchtest server on one fake clock, each behind its own Partition.
// The clock moves only in Step, and only once every process has done what
// the current time allows (its Idle, and Ready); after each move Check
// looks for two processes acting at once.
type Cluster struct {
	T      *testing.T
	Server *watchtest.Server
	Clock  *clock.Fake
	// Logger writes every process's lines to Log, unless its config says
	// otherwise.
	Logger *slog.Logger
	Log    *testlog.Log
	// Refuse is given to the partitions of processes connected from then on.
	Refuse func(r *http.Request) (code int, status string)

	// Ready, if set, reports whether what the processes set going is under
	// way (a leader's callback has begun); Settle waits for it too.
	Ready func() bool
	// Check, if set, fails the test when the processes broke the safety
	// rule the package promises; it runs after every Settle.
	Check func()

	mu    sync.Mutex
	procs []Process
}

// NewCluster starts a server serving leases; the clock reads 2026-01-01.
func NewCluster(t *testing.T) *Cluster {
	srv := watchtest.NewServer()
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	t.Cleanup(srv.Close)
	logger, log := testlog.NewLogger()
	return &Cluster{T: t, Server: srv, Clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), Logger: logger, Log: log}
}

// Connect returns a client of the leases in Namespace whose requests go
// through a new Partition (without retries: the process under test retries).
func (c *Cluster) Connect() (*httpwatch.ResourceClient, *Partition) {
	c.T.Helper()
	part := &Partition{Next: c.Server.Client().Transport, refuse: c.Refuse}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: c.Server.URL, QPS: -1, Transport: part})
	require.NoError(c.T, err)
	client.RetryMax = 0
	c.T.Cleanup(client.CloseIdleConnections)
	return client.Resource(Resource), part
}

// Process is what Go needs of a candidate or a member.
type Process struct {
	Name string // in failures: "candidate a"
	Run  func(context.Context) error
	// Idle reports whether the process waits for the clock (past now) or
	// for the test, or is done.
	Idle func(now time.Time) bool
	// Unblock lets go of whatever the test holds the process on, so that
	// it can stop at the end of the test.
	Unblock func()
}

// Proc is one process's Run in its own goroutine.
type Proc struct {
	Done chan struct{} // closed when Run returned
	Err  error         // what Run returned, once Done is closed
	Stop context.CancelFunc
}

// Go runs p in a new goroutine until the test ends, when it stops p,
// unblocks it and waits for Run to return.
func (c *Cluster) Go(p Process) *Proc {
	ctx, cancel := context.WithCancel(context.Background())
	proc := &Proc{Done: make(chan struct{}), Stop: cancel}
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	go func() {
		defer close(proc.Done)
		proc.Err = p.Run(ctx)
	}()
	c.T.Cleanup(func() {
		cancel()
		p.Unblock()
		testwait.Recv(c.T, proc.Done, p.Name+" to stop")
	})
	return proc
}

// Settle waits until every process has done what the current time allows
// and waits again, then runs Check.
func (c *Cluster) Settle() {
	c.T.Helper()
	now := c.Clock.Now()
	if !assert.Eventually(c.T, func() bool { return len(c.busy(now)) == 0 }, testwait.Timeout, time.Millisecond) {
		c.T.Fatalf("the processes did not settle at %v: busy %q", now, c.busy(now))
	}
	if c.Check != nil {
		c.Check()
	}
}

// busy names what has not done what the current time allows: processes
// not idle, and "ready" while Ready is false.
func (c *Cluster) busy(now time.Time) []string {
	c.mu.Lock()
	procs := slices.Clone(c.procs)
	c.mu.Unlock()
	var busy []string
	for _, p := range procs {
		if !p.Idle(now) {
			busy = append(busy, p.Name)
		}
	}
	if c.Ready != nil && !c.Ready() {
		busy = append(busy, "ready")
	}
	return busy
}

// Step moves the clock in steps of at most d until it has moved total,
// settling after each.
func (c *Cluster) Step(total, d time.Duration) {
	c.T.Helper()
	for moved := time.Duration(0); moved < total; moved += d {
		c.Clock.Step(min(d, total-moved))
		c.Settle()
	}
}

// ReleaseHeld lets p's held requests go and waits until they have
// returned: Idle counts a process with a held request as idle, so the
// clock must not move on before the replies are in.
func (c *Cluster) ReleaseHeld(p *Partition) {
	c.T.Helper()
	p.Release()
	require.Eventually(c.T, func() bool { return p.Held() == 0 }, testwait.Timeout, time.Millisecond, "held requests did not return")
}

// Lease reads the lease name as the server holds it.
func (c *Cluster) Lease(name string) *raw.Object {
	c.T.Helper()
	o, err := c.Server.Get(watchtest.Leases, Namespace, name)
	require.NoError(c.T, err)
	return o
}
