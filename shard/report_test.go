package shard

import (
	"context"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Without RBAC on leases a member says so at once, in one Error line
// naming the lease, the namespace, the verb and the grant it needs (its
// renewal and its read of the group fail alike: one cure, one line); every
// failed request reaches OnError; nothing more is logged while it goes
// on; no key is handed out; once RBAC is granted it says so at Info and
// takes its keys. Decision 25.
func TestForbiddenLeaseIsOneErrorLine(t *testing.T) {
	h := newHarness(t)
	h.Refuse = leasetest.Forbidden
	var errs leasetest.Errors
	a := h.add("a", func(c *Config) { c.OnError = errs.Add })
	h.Settle()
	lines := h.Log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "one line at once")
	assert.Equal(t, slog.LevelError, lines[0].Level)
	for _, want := range []string{
		"shard member: cannot get lease ns/g-a: 403 Forbidden",
		"grant get, list, create and update on leases.coordination.k8s.io in namespace ns",
		"group=g", "identity=a", "verb=get", "lease=g-a", "namespace=ns",
	} {
		assert.Contains(t, lines[0].Text, want)
	}
	require.Len(t, errs.All(), 2, "the renewal and the read of the group")
	for _, err := range errs.All() {
		assert.True(t, httpwatch.IsForbidden(err), err)
	}

	h.Step(time.Minute, testRetry)
	assert.Len(t, h.Log.Lines(slog.LevelWarn), 1, "repeats are not logged one by one")
	assert.Len(t, errs.All(), 2*(1+int(time.Minute/testRetry)), "every failure reaches OnError")
	assert.Empty(t, h.holders())

	a.part.SetRefuse(nil) // RBAC granted
	h.Step(2*testRetry, testRetry)
	assert.Equal(t, h.want("a"), h.holders())
	info := h.Log.Lines(slog.LevelInfo)
	require.Len(t, info, 2)
	assert.Equal(t, slog.LevelInfo, info[1].Level)
	assert.Contains(t, info[1].Text, "shard member: lease requests succeed again after 62 failures")
	h.Step(time.Minute, testRetry)
	assert.Len(t, h.Log.Lines(slog.LevelInfo), 2, "a healthy member logs nothing above Debug")
}

// testMember is a member of group g on srv with a fake clock, and its log.
func testMember(t *testing.T, srv *watchtest.Server, edit func(*Config)) (*Member, *testlog.Log) {
	t.Helper()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	c.RetryMax = 0
	t.Cleanup(c.CloseIdleConnections)
	logger, log := testlog.NewLogger()
	cfg := Config{Leases: c.Resource(leasetest.Resource), Group: "g", Identity: "a", Logger: logger, Clock: clock.NewFake(time.Unix(0, 0))}
	if edit != nil {
		edit(&cfg)
	}
	m, err := New(cfg)
	require.NoError(t, err)
	return m, log
}

// runMember runs m until the test ends; wait returns Run's result, or
// fails the test if Run has not returned within testwait.Timeout.
func runMember(t *testing.T, m *Member) (wait func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() { defer close(done); err = m.Run(ctx) }()
	wait = func() error {
		testwait.Recv(t, done, "Run to return")
		return err
	}
	t.Cleanup(func() { cancel(); wait() })
	return wait
}

// A server that does not serve leases (404 on the collection) can never
// give the member keys: Run returns an error wrapping ErrNotServed at
// once, after one Error line, and a waiting Acquire gets processor.ErrStopped.
// Decisions 25 and 26.
func TestLeasesNotServedEndsRun(t *testing.T) {
	srv := watchtest.NewServer()
	srv.Withhold(watchtest.Leases) // a server without leases
	t.Cleanup(srv.Close)
	var errs leasetest.Errors
	m, log := testMember(t, srv, func(c *Config) { c.OnError = errs.Add })
	acquired := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		_, _, err := m.Acquire(ctx, "ns/k")
		acquired <- err
	}()
	err := runMember(t, m)()
	require.ErrorIs(t, err, ErrNotServed)
	assert.ErrorIs(t, err, discovery.ErrUnknownResource, "the 404 is explained by discovery")
	assert.False(t, httpwatch.IsNotFound(err), "not a lease that is merely absent")
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "shard member: cannot get lease ns/g-a: 404 Not Found; check the resource name, version and group: the server does not serve leases.coordination.k8s.io")
	require.Len(t, errs.All(), 1)
	assert.ErrorIs(t, testwait.Recv(t, acquired, "Acquire to return once Run had"), processor.ErrStopped)
}

// Before its first round a member knows of no owner for any key: Acquire
// waits rather than calling the key another member's (ErrNotOwned), and
// gets the key once the member has joined. Decision 26.
func TestAcquireBeforeFirstRoundWaits(t *testing.T) {
	srv := watchtest.NewServer()
	t.Cleanup(srv.Close) // after the member's
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	m, _ := testMember(t, srv, nil)
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := m.Acquire(cancelled, "ns/k")
	require.ErrorIs(t, err, context.Canceled, "not ErrNotOwned: nobody owns the key yet")

	type result struct {
		release func()
		err     error
	}
	acquired := make(chan result, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		_, release, err := m.Acquire(ctx, "ns/k")
		acquired <- result{release, err}
	}()
	runMember(t, m)
	r := testwait.Recv(t, acquired, "Acquire to return once the member had joined")
	require.NoError(t, r.err)
	r.release()
}

// A request cut off by the end of Run's context is no failure: OnError
// never hears of it, and nothing is logged above Debug. Decision 25.
func TestCancellationIsNotAnError(t *testing.T) {
	h := newHarness(t)
	var errs leasetest.Errors
	a := h.add("a", func(c *Config) { c.OnError = errs.Add })
	h.Step(2*testRetry, testRetry)
	a.part.Hold() // never released
	h.Clock.Step(testRetry)
	require.Eventually(t, func() bool { return a.part.Held() == 1 }, testwait.Timeout, time.Millisecond)
	// The held request stays held until Stop cancels it; the release on
	// leaving goes through (held before Stop, it could be issued first).
	a.part.StopHolding()
	a.Stop()
	testwait.Recv(t, a.Done, "a to stop")
	require.NoError(t, a.Err)
	assert.Empty(t, errs.All())
	assert.Empty(t, h.Log.Lines(slog.LevelInfo))
}
