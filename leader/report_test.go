package leader

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/internal/lease/leasetest"
	"github.com/listwatch/listwatch/kubeconfig"
)

// forbidden answers every lease request as RBAC does for a user without
// rights on leases.
func forbidden(r *http.Request) (int, string) {
	return http.StatusForbidden, fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
		`"message":"leases.coordination.k8s.io is forbidden: User \"nobody\" cannot %s resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\"",`+
		`"reason":"Forbidden","details":{"group":"coordination.k8s.io","kind":"leases"},"code":403}`, r.Method)
}

// errorLog collects what reaches OnError.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// Without RBAC on leases the candidate says so at once, in one Error line
// naming the lease, the namespace, the verb and the grant it needs; every
// failed request reaches OnError; repeats are summarised every
// SummaryEvery, not logged one by one; once RBAC is granted it says so at
// Info and leads. Decision 29.
func TestForbiddenLeaseIsOneErrorLine(t *testing.T) {
	h := newHarness(t)
	h.refuse = forbidden
	var errs errorLog
	a := h.add("a", func(c *Config) { c.OnError = errs.add })
	h.settle()
	lines := h.log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "one line at once")
	assert.Equal(t, slog.LevelError, lines[0].Level)
	for _, want := range []string{
		"leader election: cannot get lease ns/lock: 403 Forbidden",
		"grant get, create and update on leases.coordination.k8s.io in namespace ns",
		"identity=a", "verb=get", "lease=lock", "namespace=ns", `cannot GET resource "leases"`,
	} {
		assert.Contains(t, lines[0].Text, want)
	}
	require.Len(t, errs.all(), 1)
	assert.True(t, httpwatch.IsForbidden(errs.all()[0]))
	assert.Empty(t, a.e.Leader())

	h.step(time.Minute, testRetry)
	assert.Len(t, h.log.Lines(slog.LevelWarn), 1, "repeats are not logged one by one")
	assert.Len(t, errs.all(), 1+int(time.Minute/testRetry), "every failure reaches OnError")

	h.step(lease.SummaryEvery-time.Minute, testRetry)
	lines = h.log.Lines(slog.LevelWarn)
	require.Len(t, lines, 2)
	assert.Equal(t, slog.LevelError, lines[1].Level)
	assert.Contains(t, lines[1].Text, "lease requests still failing, 150 times since the last report")

	a.part.setRefuse(nil) // RBAC granted
	h.step(testRetry, testRetry)
	require.Equal(t, []string{"a"}, h.leaders())
	info := h.log.Lines(slog.LevelInfo)
	require.Len(t, info, 3)
	assert.Equal(t, slog.LevelInfo, info[2].Level)
	assert.Contains(t, info[2].Text, "leader election: lease requests succeed again after")
	h.step(time.Minute, testRetry)
	assert.Len(t, h.log.Lines(slog.LevelInfo), 3, "a healthy leader logs nothing above Debug")
}

// A server that does not serve leases will never elect anyone: its 404
// names no lease, so discovery explains it as an unknown resource from the
// first get, and Run returns an error wrapping ErrNotServed at once, after
// one Error line. Decision 29.
func TestLeasesNotServedEndsRun(t *testing.T) {
	srv := watchtest.NewServer() // no leases
	defer srv.Close()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	logger, log := leasetest.NewLogger()
	var errs errorLog
	e, err := New(Config{
		Leases: c.Resource(leases), Name: "lock", Identity: "a",
		OnStartedLeading: func(context.Context) { t.Error("led without leases") },
		Logger:           logger, OnError: errs.add, Clock: clock.NewFake(time.Unix(0, 0)),
	})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- e.Run(context.Background()) }()
	select {
	case err = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return on a server without leases")
	}
	require.ErrorIs(t, err, ErrNotServed)
	assert.ErrorIs(t, err, httpwatch.ErrUnknownResource, "the 404 is explained by discovery")
	assert.False(t, httpwatch.IsNotFound(err), "not a lease that is merely absent")
	assert.Empty(t, e.Leader())
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "leader election: cannot get lease ns/lock: 404 Not Found; the server does not serve coordination.k8s.io/v1 leases")
	require.Len(t, errs.all(), 1)
}

// A request cut off by the end of Run's context is no failure: OnError
// never hears of it, and nothing is logged above Debug. Decision 29.
func TestCancellationIsNotAnError(t *testing.T) {
	h := newHarness(t)
	var errs errorLog
	a := h.add("a", func(c *Config) { c.OnError = errs.add })
	h.settle()
	b := h.add("b", func(c *Config) { c.OnError = errs.add })
	h.settle()
	for _, n := range []*node{a, b} {
		n.part.mu.Lock()
		n.part.hold = make(chan struct{}) // never released
		n.part.mu.Unlock()
	}
	h.clk.Step(testRetry)
	require.Eventually(t, func() bool { return a.part.held() == 1 && b.part.held() == 1 }, 10*time.Second, time.Millisecond)
	a.stop()
	b.stop()
	for _, n := range []*node{a, b} {
		select {
		case <-n.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s did not stop", n.id)
		}
		require.NoError(t, n.err)
	}
	assert.Empty(t, errs.all())
	assert.Empty(t, h.log.Lines(slog.LevelInfo))
}
