package e2e

import (
	"context"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/testkit/realapi"
)

// nobodyLeases is a lease client with a token RBAC grants nothing to, in a
// namespace that exists, on a server restarted with RBAC if need be.
func nobodyLeases(t *testing.T) *httpwatch.ResourceClient {
	t.Helper()
	nobody := realapi.Env(t, "REALAPI_TOKEN_NOBODY")
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	ns := namespace(t, client(t))
	cfg := config(t)
	cfg.BearerToken = nobody
	c, err := httpwatch.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: ns})
}

// firstError records what reaches OnError and signals the first.
type firstError struct {
	once  sync.Once
	first chan error
}

func newFirstError() *firstError { return &firstError{first: make(chan error, 1)} }

func (f *firstError) add(err error) { f.once.Do(func() { f.first <- err }) }

// errorWithin waits for the first error, at most d.
func (f *firstError) errorWithin(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case err := <-f.first:
		return err
	case <-time.After(d):
		t.Fatalf("no error reported within %v", d)
		return nil
	}
}

// assertOneErrorLine checks the log: one line above Info, at Error, that
// names the lease's namespace and the grant to make.
func assertOneErrorLine(t *testing.T, log *testlog.Log, ns, verbs string) {
	t.Helper()
	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelError)) > 0 }, 2*time.Second, 10*time.Millisecond,
		"an Error line within 2s")
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "%v", lines)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "403 Forbidden; check RBAC: grant "+verbs+" on leases.coordination.k8s.io in namespace "+ns)
	assert.Contains(t, lines[0].Text, `User "nobody" cannot get resource "leases"`)
}

// Without RBAC on leases, a candidate says so in one Error line within 2s,
// OnError hears of it, and Run goes on retrying (RBAC granted later would
// cure it) without leading, returning nil when cancelled. Decision 25.
func TestLeaderWithoutRBACOnLeases(t *testing.T) {
	leases := nobodyLeases(t)
	logger, log := testlog.NewLogger()
	errs := newFirstError()
	e, err := leader.New(leader.Config{
		Leases: leases, Name: "lock", Identity: "a",
		OnStartedLeading: func(context.Context) { t.Error("led without rights on leases") },
		Logger:           logger, OnError: errs.add,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	assert.True(t, httpwatch.IsForbidden(errs.errorWithin(t, 2*time.Second)))
	assertOneErrorLine(t, log, leases.Resource().Namespace, "get, create and update")
	assert.Empty(t, e.Leader())
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Run did not return once cancelled")
	}
}

// The same for a shard member: one Error line within 2s, OnError, no key
// handed out, Run returning nil when cancelled. Decision 25.
func TestShardWithoutRBACOnLeases(t *testing.T) {
	leases := nobodyLeases(t)
	logger, log := testlog.NewLogger()
	errs := newFirstError()
	m, err := shard.New(shard.Config{Leases: leases, Group: "g", Identity: "a", Logger: logger, OnError: errs.add})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	assert.True(t, httpwatch.IsForbidden(errs.errorWithin(t, 2*time.Second)))
	assertOneErrorLine(t, log, leases.Resource().Namespace, "get, list, create and update")
	assert.False(t, m.Owns("ns/k"))
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Run did not return once cancelled")
	}
}

// Leases in a namespace that does not exist: the server's 404 on the
// create names the namespace, so the candidate says to create it (Error)
// and goes on retrying; it does not take the Lease API for missing.
// Decision 25.
func TestLeaderInMissingNamespace(t *testing.T) {
	c := client(t)
	leases := c.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "e2e-no-such-namespace"})
	logger, log := testlog.NewLogger()
	errs := newFirstError()
	e, err := leader.New(leader.Config{
		Leases: leases, Name: "lock", Identity: "a",
		OnStartedLeading: func(context.Context) { t.Error("led without a namespace") },
		Logger:           logger, OnError: errs.add,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	assert.True(t, httpwatch.IsNotFound(errs.errorWithin(t, 2*time.Second)))
	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelError)) > 0 }, 2*time.Second, 10*time.Millisecond)
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "%v", lines)
	assert.Contains(t, lines[0].Text, "cannot create lease e2e-no-such-namespace/lock: 404 Not Found; create namespace e2e-no-such-namespace")
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err, "not ErrNotServed: the namespace may yet be created")
	case <-time.After(wait):
		t.Fatal("Run did not return once cancelled")
	}
}
