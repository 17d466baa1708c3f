package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

const owner = "example.com/copy-of"

// server serves configmaps named names in ns "ns", labelled app, and
// secrets, leases and events.
func server(t *testing.T, names ...string) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	s.AddResource(watchtest.Events, watchtest.Definition{})
	for _, n := range names {
		_, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":{"app":"x"}},"data":{"k":"v-%s"}}`, n, n))
		require.NoError(t, err)
	}
	return s
}

// running is an App's Run going in the background.
type running struct {
	app   *app.App
	log   *testlog.Log
	wired chan struct{} // closed once setup has wired the app
	done  chan error
	stop  context.CancelFunc
}

// start runs a with setup against s until the test ends.
func start(t *testing.T, a *app.App, s *watchtest.Server, setup func(*app.App) error, args ...string) *running {
	t.Helper()
	logger, log := testlog.NewLogger()
	if a.Logger == slog.Default() {
		a.Logger = logger
	}
	a.HealthAddr = ""
	ctx, stop := context.WithCancel(context.Background())
	r := &running{app: a, log: log, wired: make(chan struct{}), done: make(chan error, 1), stop: stop}
	args = append([]string{"--server", s.URL}, args...)
	go func() {
		r.done <- a.Run(ctx, args, func(a *app.App) error {
			defer close(r.wired)
			return setup(a)
		})
	}()
	t.Cleanup(func() {
		stop()
		select {
		case <-r.done:
		case <-time.After(30 * time.Second):
			t.Error("Run did not return")
		}
	})
	return r
}

// wait returns Run's error once it has returned.
func (r *running) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-r.done:
		r.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}

// probe answers path from the app's health handler.
func probe(t *testing.T, r *running, path string) (int, string) {
	t.Helper()
	testwait.Recv(t, r.wired, "setup")
	rec := httptest.NewRecorder()
	r.app.Health().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec.Code, rec.Body.String()
}

// copier keeps, for each configmap of cms, a secret with the same data.
func copier(a *app.App, cms, secrets *app.Cache) app.Func {
	return func(ctx context.Context, r *app.Request) error {
		cm, ok := r.Object()
		if !ok {
			return nil
		}
		var c struct{ Data map[string]string }
		var s struct{ Data map[string][]byte }
		if err := cm.Decode(&c); err != nil {
			return err
		}
		name := cm.Name() + "-copy"
		if old, ok := secrets.Get(cm.Namespace(), name); ok && old.Decode(&s) == nil && maps.EqualFunc(s.Data, c.Data, sameBytes) {
			return nil
		}
		_, err := secrets.Apply(ctx, patch.Object("v1", "Secret", cm.Namespace(), name).ControlledBy(cm).
			Set(patch.Path("metadata", "labels", owner), cm.Name()).SecretStringData(c.Data))
		if err == nil {
			a.Eventf(cm, "Copied", "data copied to Secret %s", name)
		}
		return err
	}
}

func copierSetup(a *app.App) error {
	cms := a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
	secrets := a.Watch(app.Secrets, app.Options{Labels: owner})
	a.Reconcile(cms, copier(a, cms, secrets), secrets)
	return nil
}

func secretData(t *testing.T, s *watchtest.Server, name string) (string, bool) {
	t.Helper()
	o, err := s.Get(watchtest.Secrets, "ns", name)
	if err != nil {
		return "", false
	}
	return o.Get("data.k").String(), true
}

// The composition root runs a controller end to end: a secret per
// configmap, owned by it; a secret changed by someone else is put back
// (its owner is requeued); an Event per write. Decision 39.
func TestAppRunsAController(t *testing.T) {
	s := server(t, "a", "b")
	r := start(t, app.New("copier"), s, copierSetup)
	require.Eventually(t, func() bool {
		va, oka := secretData(t, s, "a-copy")
		vb, okb := secretData(t, s, "b-copy")
		return oka && okb && va == "di1h" && vb == "di1i" // base64 of v-a, v-b
	}, 10*time.Second, 5*time.Millisecond, "a secret per configmap")
	cm, err := s.Get(watchtest.ConfigMaps, "ns", "a")
	require.NoError(t, err)
	sec, err := s.Get(watchtest.Secrets, "ns", "a-copy")
	require.NoError(t, err)
	assert.Equal(t, cm.UID(), sec.Get("metadata.ownerReferences.0.uid").String())
	assert.True(t, sec.Get("metadata.ownerReferences.0.controller").Bool())

	_, err = s.Update(watchtest.Secrets, `{"metadata":{"name":"a-copy","namespace":"ns","labels":{"`+owner+`":"a"},"ownerReferences":`+
		sec.Get("metadata.ownerReferences").Raw+`},"data":{"k":"dGFtcGVyZWQ="}}`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { v, _ := secretData(t, s, "a-copy"); return v == "di1h" },
		10*time.Second, 5*time.Millisecond, "the owned secret put back")
	require.Eventually(t, func() bool { return len(s.List(watchtest.Events, "ns")) >= 2 },
		10*time.Second, 5*time.Millisecond, "an Event per write")

	code, body := probe(t, r, "/readyz")
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "cache configmaps.v1 (labels app): synced")
	code, _ = probe(t, r, "/healthz")
	assert.Equal(t, http.StatusOK, code)
	r.stop()
	require.NoError(t, r.wait(t))
	assert.Empty(t, r.log.Lines(slog.LevelWarn), "a healthy run logs nothing above Info")
}

// /readyz says not synced while the list is refused, and ok once RBAC is
// granted: the program waits through the 403 (logged once, at Error)
// rather than ending. Decision 39.
func TestReadyWaitsThroughForbidden(t *testing.T) {
	s := server(t, "a")
	var granted atomic.Bool
	s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"list", "watch"}, Times: 1 << 30,
		Match: func(r watchtest.Request) bool { return !granted.Load() && strings.Contains(r.Path, "configmaps") }})
	r := start(t, app.New("copier"), s, copierSetup)
	require.Eventually(t, func() bool { return len(r.log.Lines(slog.LevelError)) > 0 }, 10*time.Second, 5*time.Millisecond)
	code, body := probe(t, r, "/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "not synced: configmaps.v1")
	assert.Regexp(t, `cache configmaps.v1 \(labels app\): not synced: .*403`, body, "the cache's own line says why")

	granted.Store(true)
	require.Eventually(t, func() bool { code, _ := probe(t, r, "/readyz"); return code == http.StatusOK },
		30*time.Second, 10*time.Millisecond, "ready once granted")
	require.Eventually(t, func() bool { _, ok := secretData(t, s, "a-copy"); return ok }, 10*time.Second, 5*time.Millisecond)
	assert.Len(t, r.log.Lines(slog.LevelError), 1, "%v", r.log.Above())
}

// Caches that do not sync within SyncTimeout end Run with why, on the
// app's clock. Decision 39.
func TestSyncTimeoutEndsRun(t *testing.T) {
	s := server(t)
	s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"list", "watch"}, Times: 1 << 30})
	fake := clock.NewFake(time.Unix(0, 0))
	a := app.New("copier")
	a.Clock = fake
	r := start(t, a, s, copierSetup)
	require.Eventually(t, func() bool { return len(r.log.Lines(slog.LevelError)) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the 403 said at once")
	require.NoError(t, fake.WaitForWaiters(testwait.Context(t), 1)) // the sync timeout
	fake.Step(app.DefaultSyncTimeout)
	err := r.wait(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "caches not synced within 2m0s")
	assert.Contains(t, err.Error(), "403")
}

// A shutdown that does not finish within ShutdownTimeout ends Run with
// ErrShutdownTimeout naming what was still stopping. Decision 39.
func TestShutdownIsBounded(t *testing.T) {
	s := server(t)
	fake := clock.NewFake(time.Unix(0, 0))
	a := app.New("stuck")
	a.Clock = fake
	release, started := make(chan struct{}), make(chan struct{})
	defer close(release)
	r := start(t, a, s, func(a *app.App) error {
		a.Watch(app.ConfigMaps)
		a.Go(func(context.Context) error { close(started); <-release; return nil }) // ignores its context
		return nil
	})
	testwait.Recv(t, started, "the Go function")
	r.stop()
	require.NoError(t, fake.WaitForWaiters(testwait.Context(t), 1))
	fake.Step(app.DefaultShutdownTimeout)
	err := r.wait(t)
	require.ErrorIs(t, err, app.ErrShutdownTimeout)
	assert.Contains(t, err.Error(), "still stopping runners and Go functions")
}

// A runner's workers get half the app's ShutdownTimeout to drain (the
// runner gives up its busy keys then, reconcile.ErrDrainTimeout), so that
// the rest of the shutdown (informers, snapshots, probes) still has the
// other half. Decision 39.
func TestRunnersGetHalfTheShutdownToDrain(t *testing.T) {
	s := server(t, "a")
	a := app.New("copier")
	a.ShutdownTimeout = 8 * time.Second
	r := start(t, a, s, copierSetup)
	// "app: started" is logged once the runners are configured: reading
	// the log orders this test's reads after those writes.
	logged(t, r, "app: started", "app")
	require.Len(t, a.Runners(), 1)
	assert.Equal(t, 4*time.Second, a.Runners()[0].ShutdownTimeout)
}

// When a failure ends the program and the shutdown then overruns
// ShutdownTimeout, Run's error says both: the failure first, then what was
// still stopping. Decision 39.
func TestOverrunShutdownKeepsTheFailure(t *testing.T) {
	s := server(t)
	fake := clock.NewFake(time.Unix(0, 0))
	a := app.New("stuck")
	a.Clock = fake
	boom := errors.New("boom")
	release, started, fail := make(chan struct{}), make(chan struct{}), make(chan struct{})
	defer close(release)
	r := start(t, a, s, func(a *app.App) error {
		a.Watch(app.ConfigMaps)
		a.Go(func(context.Context) error { close(started); <-release; return nil }) // ignores its context
		a.Go(func(context.Context) error { <-fail; return boom })
		return nil
	})
	testwait.Recv(t, started, "the Go function")
	close(fail)
	require.NoError(t, fake.WaitForWaiters(testwait.Context(t), 1)) // the shutdown's deadline
	fake.Step(app.DefaultShutdownTimeout)
	err := r.wait(t)
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, err, app.ErrShutdownTimeout)
	assert.True(t, strings.HasPrefix(err.Error(), "boom\n"), "the failure comes first: %v", err)
}

// With leader election the replica leads, reconciles, and releases its
// lease at shutdown; its snapshot is saved. Decision 39.
func TestLeaderReleasesLeaseAndSavesSnapshot(t *testing.T) {
	s := server(t, "a")
	dir := t.TempDir()
	r := start(t, app.New("copier"), s, copierSetup, "--leader-elect", "--lease-namespace", "ns", "--identity", "me", "--snapshot-dir", dir)
	require.Eventually(t, func() bool { _, ok := secretData(t, s, "a-copy"); return ok }, 10*time.Second, 5*time.Millisecond)
	lease, err := s.Get(watchtest.Leases, "ns", "copier")
	require.NoError(t, err)
	assert.Equal(t, "me", lease.Get("spec.holderIdentity").String())
	_, body := probe(t, r, "/readyz")
	assert.Contains(t, body, "runner copier: leading")

	r.stop()
	require.NoError(t, r.wait(t))
	lease, err = s.Get(watchtest.Leases, "ns", "copier")
	require.NoError(t, err)
	assert.Empty(t, lease.Get("spec.holderIdentity").String(), "released")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	assert.Len(t, files, 2, "a snapshot per cache")
}

// The same resource and options are one cache; wiring errors end Run
// before anything runs. Decision 39.
func TestWiring(t *testing.T) {
	s := server(t)
	_, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"labelled","namespace":"ns","labels":{"app":"x"}}}`)
	require.NoError(t, err)
	_, err = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"plain","namespace":"ns"}}`)
	require.NoError(t, err)
	var one, two, all, other *app.Cache
	r := start(t, app.New("w"), s, func(a *app.App) error {
		one = a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
		two = a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
		all = a.Watch(app.ConfigMaps)
		other = a.Watch(app.Secrets)
		return nil
	})
	testwait.Recv(t, r.wired, "setup")
	assert.Same(t, one, two, "the same resource and options: one cache")
	assert.NotSame(t, one, all, "other options of the same resource: another cache")
	assert.NotSame(t, one, other)
	require.Eventually(t, func() bool { code, _ := probe(t, r, "/readyz"); return code == http.StatusOK }, 10*time.Second, 5*time.Millisecond)
	assert.Len(t, one.List(), 1)
	assert.Len(t, all.List(), 2)
	r.stop()
	require.NoError(t, r.wait(t))

	for name, tc := range map[string]struct {
		setup func(*app.App) error
		want  string
	}{
		"bad projection": {func(a *app.App) error {
			a.Watch(app.Pods, app.Options{Project: []string{"spec.containers.#"}})
			return nil
		},
			"app: Watch pods.v1"},
		"setup error": {func(*app.App) error { return io.EOF }, "app: setup: EOF"},
		"reconcile of nothing": {func(a *app.App) error { a.Reconcile(nil, nil); return nil },
			"app: Reconcile needs a cache from Watch and a Func"},
	} {
		t.Run(name, func(t *testing.T) {
			r := start(t, app.New("w"), s, tc.setup)
			assert.ErrorContains(t, r.wait(t), tc.want)
		})
	}
}

// A demo server is used when nothing names a server, and only then.
// Decision 39.
func TestDemoWhenNothingNamesAServer(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	s := server(t, "a")
	a := app.New("demo")
	stopped := make(chan struct{})
	a.Demo = func(context.Context) (string, func(), error) { return s.URL, func() { close(stopped) }, nil }
	a.HealthAddr = ""
	logger, _ := testlog.NewLogger()
	a.Logger = logger
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, nil, copierSetup) }()
	require.Eventually(t, func() bool { _, ok := secretData(t, s, "a-copy"); return ok }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, testwait.Recv(t, done, "Run"))
	testwait.Recv(t, stopped, "the demo stopped")
}

// Under leader election, a replica that cannot read or take its lease
// (here a 403 on every lease request) within SyncTimeout of the sync ends
// Run with why, rather than stand by for ever. Decision 39.
func TestLeaseNeverReachedEndsRun(t *testing.T) {
	s := server(t, "a")
	s.FailNext(watchtest.Failure{Code: 403, Times: 1 << 30, Match: func(r watchtest.Request) bool { return strings.Contains(r.Path, "/leases") }})
	fake := clock.NewFake(time.Unix(0, 0))
	a := app.New("copier")
	a.Clock = fake
	r := start(t, a, s, copierSetup, "--leader-elect", "--lease-namespace", "ns")
	require.Eventually(t, func() bool { return len(r.log.Lines(slog.LevelError)) > 0 }, 10*time.Second, 5*time.Millisecond,
		"the lease's 403 said at once")
	var err error
	for ended, steps := false, 0; !ended; steps++ { // the lease wait's timer may not be armed yet: step until it was
		require.Less(t, steps, 10, "Run did not end")
		fake.Step(app.DefaultSyncTimeout)
		select {
		case err = <-r.done:
			r.done <- err
			ended = true
		case <-time.After(time.Second):
		}
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no lease record read or taken in namespace ns within 2m0s")
	assert.Contains(t, err.Error(), "403")
	_, statErr := s.Get(watchtest.Secrets, "ns", "a-copy")
	assert.Error(t, statErr, "a replica that never led wrote nothing")
}

// Once the shutdown begins /readyz answers 503, so that no traffic is
// sent to a replica on its way out. Decision 39.
func TestNotReadyWhileShuttingDown(t *testing.T) {
	s := server(t)
	release, started := make(chan struct{}), make(chan struct{})
	r := start(t, app.New("stuck"), s, func(a *app.App) error {
		a.Watch(app.ConfigMaps)
		a.Go(func(ctx context.Context) error { close(started); <-ctx.Done(); <-release; return nil })
		return nil
	})
	testwait.Recv(t, started, "the Go function")
	code, _ := probe(t, r, "/readyz")
	assert.Equal(t, http.StatusOK, code)
	r.stop()
	require.Eventually(t, func() bool { code, _ := probe(t, r, "/readyz"); return code == http.StatusServiceUnavailable },
		10*time.Second, 5*time.Millisecond)
	_, body := probe(t, r, "/readyz")
	assert.Contains(t, body, "shutting down")
	close(release)
	require.NoError(t, r.wait(t))
}

// A Config set by the program is the server; no connection flag is
// registered then. Decision 39.
func TestConfigSetByTheProgram(t *testing.T) {
	s := server(t, "a")
	a := app.New("cfg")
	a.Config = &kubeconfig.Config{Host: s.URL}
	a.HealthAddr = ""
	logger, _ := testlog.NewLogger()
	a.Logger = logger
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, nil, copierSetup) }()
	require.Eventually(t, func() bool { _, ok := secretData(t, s, "a-copy"); return ok }, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.NoError(t, testwait.Recv(t, done, "Run"))
	assert.Nil(t, a.Flags.Lookup("server"))
	assert.NotNil(t, a.Flags.Lookup("leader-elect"))
}

// With Shards two replicas share the keys by membership Leases: between
// them every configmap gets its secret, and each sees the other.
// Decision 39.
func TestShardsShareTheKeys(t *testing.T) {
	s := server(t, "a", "b", "c", "d", "e", "f")
	args := func(id string) []string { return []string{"--shards", "--lease-namespace", "ns", "--identity", id} }
	r1 := start(t, app.New("copier"), s, copierSetup, args("r1")...)
	r2 := start(t, app.New("copier"), s, copierSetup, args("r2")...)
	require.Eventually(t, func() bool {
		for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
			if _, ok := secretData(t, s, n+"-copy"); !ok {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "every configmap copied")
	for _, r := range []*running{r1, r2} {
		require.Eventually(t, func() bool {
			for _, l := range r.log.Lines(slog.LevelInfo) {
				if strings.Contains(l.Text, "app: shard members") && strings.Contains(l.Text, "members=[r1 r2]") {
					return true
				}
			}
			return false
		}, 20*time.Second, 10*time.Millisecond, "each sees both members")
		_, body := probe(t, r, "/readyz")
		assert.Contains(t, body, "shard of copier: synced")
	}
	r1.stop()
	r2.stop()
	require.NoError(t, r1.wait(t))
	require.NoError(t, r2.wait(t))
	assert.Empty(t, r1.log.Lines(slog.LevelWarn))
}

// --shards and --leader-elect exclude each other. Decision 39.
func TestShardsExcludeLeaderElection(t *testing.T) {
	err := app.New("x").Run(t.Context(), []string{"--shards", "--leader-elect"}, copierSetup)
	assert.ErrorContains(t, err, "--shards and --leader-elect exclude each other")
}

func sameBytes(b []byte, s string) bool { return string(b) == s }
