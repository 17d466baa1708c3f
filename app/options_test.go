package app_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// logged returns the value of attr in the first Info line containing msg.
func logged(t *testing.T, r *running, msg, attr string) string {
	t.Helper()
	var v string
	require.Eventually(t, func() bool {
		for _, l := range r.log.Lines(slog.LevelInfo) {
			if strings.Contains(l.Text, msg) {
				if m := regexp.MustCompile(`\b` + attr + `=(\S+)`).FindStringSubmatch(l.Text); m != nil {
					v = m[1]
					return true
				}
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "%q logged with %s", msg, attr)
	return v
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// HealthAddr serves the probes and, with Metrics set, /metrics: what a
// kubelet and a scraper read. A Metrics that fails ends Run before
// anything runs. Decision 39.
func TestHealthAddrServesProbesAndMetrics(t *testing.T) {
	s := server(t, "a")
	a := app.New("probed")
	a.Metrics = func(*app.App) (http.Handler, error) {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "copies_total 1\n") }), nil
	}
	r := start(t, a, s, copierSetup, "--health-addr", "127.0.0.1:0")
	addr := logged(t, r, "app: serving probes", "addr")
	assert.Equal(t, "true", logged(t, r, "app: serving probes", "metrics"))
	require.Eventually(t, func() bool { code, _ := get(t, "http://"+addr+"/readyz"); return code == http.StatusOK },
		10*time.Second, 5*time.Millisecond)
	code, body := get(t, "http://"+addr+"/metrics")
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "copies_total 1\n", body)
	code, body = get(t, "http://"+addr+"/livez")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "ok\ncache configmaps.v1 (labels app): synced\n")
	r.stop()
	require.NoError(t, r.wait(t))

	t.Run("without Metrics", func(t *testing.T) {
		r := start(t, app.New("probed"), s, copierSetup, "--health-addr", "127.0.0.1:0")
		addr := logged(t, r, "app: serving probes", "addr")
		assert.Equal(t, "false", logged(t, r, "app: serving probes", "metrics"))
		code, _ := get(t, "http://"+addr+"/metrics")
		assert.Equal(t, http.StatusNotFound, code)
	})
	t.Run("Metrics fails", func(t *testing.T) {
		a := app.New("probed")
		a.Metrics = func(*app.App) (http.Handler, error) { return nil, errors.New("no registry") }
		r := start(t, a, s, copierSetup)
		assert.ErrorContains(t, r.wait(t), "app: metrics: no registry")
	})
}

// A SyncTimeout or ShutdownTimeout of 0 means its default; another value
// is used as set. Decision 39.
func TestTimeoutsZeroMeansDefault(t *testing.T) {
	for _, tc := range []struct {
		set, step time.Duration
		want      string
	}{
		{0, app.DefaultSyncTimeout, "caches not synced within 2m0s"},
		{-time.Second, app.DefaultSyncTimeout, "caches not synced within 2m0s"},
		{30 * time.Second, 30 * time.Second, "caches not synced within 30s"},
	} {
		t.Run("sync "+tc.set.String(), func(t *testing.T) {
			s := server(t)
			s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"list", "watch"}, Times: 1 << 30})
			fake := clock.NewFake(time.Unix(0, 0))
			a := app.New("copier")
			a.Clock, a.SyncTimeout = fake, tc.set
			r := start(t, a, s, copierSetup)
			require.NoError(t, fake.WaitForWaiters(testwait.Context(t), 1)) // the sync timeout
			fake.Step(tc.step - time.Nanosecond)
			select {
			case err := <-r.done:
				t.Fatalf("Run ended before its sync timeout: %v", err)
			default:
			}
			fake.Step(time.Nanosecond)
			assert.ErrorContains(t, r.wait(t), tc.want)
		})
	}
	for _, tc := range []struct {
		set, step time.Duration
		want      string
	}{
		{0, app.DefaultShutdownTimeout, "(20s): still stopping"},
		{5 * time.Second, 5 * time.Second, "(5s): still stopping"},
	} {
		t.Run("shutdown "+tc.set.String(), func(t *testing.T) {
			s := server(t)
			fake := clock.NewFake(time.Unix(0, 0))
			a := app.New("stuck")
			a.Clock, a.ShutdownTimeout = fake, tc.set
			release, started := make(chan struct{}), make(chan struct{})
			defer close(release)
			r := start(t, a, s, func(a *app.App) error {
				a.Watch(app.ConfigMaps)
				a.Go(func(context.Context) error { close(started); <-release; return nil })
				return nil
			})
			testwait.Recv(t, started, "the Go function")
			r.stop()
			require.NoError(t, fake.WaitForWaiters(testwait.Context(t), 1))
			fake.Step(tc.step)
			err := r.wait(t)
			require.ErrorIs(t, err, app.ErrShutdownTimeout)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Each runner is named apart, the first after the app, so that their
// leases and log lines are told apart. Decision 39.
func TestRunnersAreNamedApart(t *testing.T) {
	s := server(t, "a")
	r := start(t, app.New("copier"), s, func(a *app.App) error {
		cms := a.Watch(app.ConfigMaps)
		secrets := a.Watch(app.Secrets)
		a.Reconcile(cms, func(context.Context, *app.Request) error { return nil })
		a.Reconcile(secrets, func(context.Context, *app.Request) error { return nil })
		a.Reconcile(cms, func(context.Context, *app.Request) error { return nil })
		return nil
	}, "--leader-elect", "--lease-namespace", "ns", "--identity", "me")
	testwait.Recv(t, r.wired, "setup")
	var names []string
	for _, rn := range r.app.Runners() {
		names = append(names, rn.Name)
	}
	assert.Equal(t, []string{"copier", "copier-2", "copier-3"}, names)
	for _, n := range names {
		require.Eventually(t, func() bool { _, err := s.Get(watchtest.Leases, "ns", n); return err == nil },
			10*time.Second, 5*time.Millisecond, "the lease of %s", n)
	}
}

// Without --identity the replica is $POD_NAME, and without
// --lease-namespace, outside a pod, the lease is in "default"; the leader's
// log line says it is this replica. Decision 39.
func TestIdentityAndLeaseNamespaceDefaults(t *testing.T) {
	if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		t.Skip("in a pod: the lease namespace is the pod's")
	}
	t.Setenv("POD_NAME", "pod-7")
	s := server(t, "a")
	r := start(t, app.New("copier"), s, copierSetup, "--leader-elect")
	require.Eventually(t, func() bool {
		lease, err := s.Get(watchtest.Leases, "default", "copier")
		return err == nil && lease.Get("spec.holderIdentity").String() == "pod-7"
	}, 10*time.Second, 5*time.Millisecond, "default/copier held by pod-7")
	assert.Equal(t, "pod-7", logged(t, r, "app: leader", "leader"))
	assert.Equal(t, "true", logged(t, r, "app: leader", "self"))
	assert.Equal(t, "default/copier", logged(t, r, "app: leader", "lease"))
}

// With Shards, a runner's own cache holds what the cache it was given
// holds: whole objects without Options.Project, the projected paths with
// it. Decision 39.
func TestShardCacheKeepsTheCachesProjection(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project []string
		want    string // data.k of configmap a, as the reconciler reads it
	}{
		{"whole", nil, "v-a"},
		{"projected", []string{"metadata.labels"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := server(t, "a")
			seen := make(chan string, 100)
			start(t, app.New("copier"), s, func(a *app.App) error {
				cms := a.Watch(app.ConfigMaps, app.Options{Labels: "app", Project: tc.project})
				a.Reconcile(cms, func(_ context.Context, r *app.Request) error {
					if o, ok := r.Object(); ok {
						select {
						case seen <- o.Get("data.k").String():
						default:
						}
					}
					return nil
				})
				return nil
			}, "--shards", "--lease-namespace", "ns", "--identity", "r1")
			assert.Equal(t, tc.want, testwait.Recv(t, seen, "a reconcile of configmap a"))
		})
	}
}
