package leader

import (
	"context"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Without RBAC on leases the candidate says so at once, in one Error line
// naming the lease, the namespace, the verb and the grant it needs; every
// failed request reaches OnError; repeats are summarised every
// SummaryEvery, not logged one by one; once RBAC is granted it says so at
// Info and leads. Decision 25.
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
		"leader election: cannot get lease ns/lock: 403 Forbidden",
		"grant get, create and update on leases.coordination.k8s.io in namespace ns",
		"identity=a", "verb=get", "lease=lock", "namespace=ns", `cannot GET resource "leases"`,
	} {
		assert.Contains(t, lines[0].Text, want)
	}
	require.Len(t, errs.All(), 1)
	assert.True(t, httpwatch.IsForbidden(errs.All()[0]))
	assert.Empty(t, a.e.Leader())

	h.Step(time.Minute, testRetry)
	assert.Len(t, h.Log.Lines(slog.LevelWarn), 1, "repeats are not logged one by one")
	assert.Len(t, errs.All(), 1+int(time.Minute/testRetry), "every failure reaches OnError")

	h.Step(lease.SummaryEvery-time.Minute, testRetry)
	lines = h.Log.Lines(slog.LevelWarn)
	require.Len(t, lines, 2)
	assert.Equal(t, slog.LevelError, lines[1].Level)
	assert.Contains(t, lines[1].Text, "leader election: lease requests failed 150 more times since ")

	a.part.SetRefuse(nil) // RBAC granted
	h.Step(testRetry, testRetry)
	require.Equal(t, []string{"a"}, h.leaders())
	info := h.Log.Lines(slog.LevelInfo)
	require.Len(t, info, 3)
	assert.Equal(t, slog.LevelInfo, info[2].Level)
	assert.Contains(t, info[2].Text, "leader election: lease requests succeed again after")
	h.Step(time.Minute, testRetry)
	assert.Len(t, h.Log.Lines(slog.LevelInfo), 3, "a healthy leader logs nothing above Debug")
}

// A server that does not serve leases will never elect anyone: its 404
// names no lease, so discovery explains it as an unknown resource from the
// first get, and Run returns an error wrapping ErrNotServed at once, after
// one Error line. Decision 25.
func TestLeasesNotServedEndsRun(t *testing.T) {
	srv := watchtest.NewServer()
	srv.Withhold(watchtest.Leases) // a server without leases
	defer srv.Close()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	logger, log := testlog.NewLogger()
	var errs leasetest.Errors
	e, err := New(Config{
		Leases: c.Resource(leasetest.Resource), Name: "lock", Identity: "a",
		OnStartedLeading: func(context.Context) { t.Error("led without leases") },
		Logger:           logger, OnError: errs.Add, Clock: clock.NewFake(time.Unix(0, 0)),
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	err = testwait.Recv(t, done, "Run to return on a server without leases")
	require.ErrorIs(t, err, ErrNotServed)
	assert.ErrorIs(t, err, discovery.ErrUnknownResource, "the 404 is explained by discovery")
	assert.False(t, httpwatch.IsNotFound(err), "not a lease that is merely absent")
	assert.Empty(t, e.Leader())
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "leader election: cannot get lease ns/lock: 404 Not Found; check the resource name, version and group: the server does not serve leases.coordination.k8s.io")
	require.Len(t, errs.All(), 1)
}

// A request cut off by the end of Run's context is no failure: OnError
// never hears of it, and nothing is logged above Debug. Decision 25.
func TestCancellationIsNotAnError(t *testing.T) {
	h := newHarness(t)
	var errs leasetest.Errors
	a := h.add("a", func(c *Config) { c.OnError = errs.Add })
	h.Settle()
	b := h.add("b", func(c *Config) { c.OnError = errs.Add })
	h.Settle()
	for _, n := range []*node{a, b} {
		n.part.Hold() // never released
	}
	h.Clock.Step(testRetry)
	require.Eventually(t, func() bool { return a.part.Held() == 1 && b.part.Held() == 1 }, testwait.Timeout, time.Millisecond)
	a.Stop()
	b.Stop()
	for _, n := range []*node{a, b} {
		testwait.Recv(t, n.Done, n.id+" to stop")
		require.NoError(t, n.Err)
	}
	assert.Empty(t, errs.All())
	assert.Empty(t, h.Log.Lines(slog.LevelInfo))
}

// A release refused when the leader steps down (ReleaseOnCancel) is not
// swallowed: Run returns it, OnError hears of it and it is logged, since
// the others then wait LeaseDuration instead of a RetryPeriod. Decision 25.
func TestFailedReleaseIsReported(t *testing.T) {
	h := newHarness(t)
	var errs leasetest.Errors
	a := h.add("a", func(c *Config) { c.ReleaseOnCancel, c.OnError = true, errs.Add })
	h.Settle()
	require.Equal(t, []string{"a"}, h.leaders())
	a.part.SetRefuse(func(r *http.Request) (int, string) {
		if r.Method == http.MethodPut {
			return leasetest.Forbidden(r)
		}
		return 0, ""
	})
	a.Stop()
	testwait.Recv(t, a.Done, "a to stop")
	require.Error(t, a.Err, "the failed release")
	assert.True(t, httpwatch.IsForbidden(a.Err), a.Err)
	assert.ErrorContains(t, a.Err, "release lease lock")
	require.Len(t, errs.All(), 1)
	assert.True(t, httpwatch.IsForbidden(errs.All()[0]))
	lines := h.Log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "leader election: cannot update lease ns/lock: 403 Forbidden")
	assert.Equal(t, "a", h.record().HolderIdentity, "left to expire")
}
