package e2e

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testlog"
)

const copyOf = "example.com/copy-of"

var (
	secrets = httpwatch.Resource{Version: "v1", Resource: "secrets"}
	leases  = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// copier is examples/controller confined to namespace ns: for each
// configmap labelled app, a secret it controls with the same data.
func copier(ns string) func(*app.App) error {
	return func(a *app.App) error {
		cms := a.Watch(app.ConfigMaps, app.Options{Namespace: ns, Labels: "app"})
		secrets := a.Watch(app.Secrets, app.Options{Namespace: ns, Labels: copyOf})
		a.Reconcile(cms, func(ctx context.Context, r *app.Request) error {
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
				Set(patch.Path("metadata", "labels", copyOf), cm.Name()).SecretStringData(c.Data))
			if err == nil {
				a.Eventf(cm, "Copied", "data copied to Secret %s", name)
			}
			return err
		}, secrets)
		return nil
	}
}

// appArgs are the command-line flags that point an app at the real
// server with token (written to a file: there is no flag for a token's
// value).
func appArgs(t *testing.T, token string, more ...string) []string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(f, []byte(token), 0o600))
	return append([]string{"--server", realapi.Env(t, "REALAPI_URL"), "--token-file", f, "--ca", realapi.Env(t, "REALAPI_CA")}, more...)
}

// grantNobody gives the user "nobody" rules in ns.
func grantNobody(t *testing.T, admin *httpwatch.Client, ns, name, rules string) {
	t.Helper()
	ctx := context.Background()
	rbac := func(res string) *httpwatch.ResourceClient {
		return admin.Resource(httpwatch.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: res, Namespace: ns})
	}
	_, err := rbac("roles").Create(ctx, fmt.Appendf(nil, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":%q},"rules":%s}`, name, rules))
	require.NoError(t, err)
	_, err = rbac("rolebindings").Create(ctx, fmt.Appendf(nil, `{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":%q},
		"subjects":[{"kind":"User","name":"nobody","apiGroup":"rbac.authorization.k8s.io"}],
		"roleRef":{"kind":"Role","name":%q,"apiGroup":"rbac.authorization.k8s.io"}}`, name, name))
	require.NoError(t, err)
}

// runApp runs a with setup and args until the test ends; stop ends it
// as a signal would (Run's context) and returns Run's error.
func runApp(t *testing.T, a *app.App, setup func(*app.App) error, args []string) (log *testlog.Log, stop func() error) {
	t.Helper()
	logger, log := testlog.NewLogger()
	a.Logger = logger
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx, args, setup) }()
	stop = func() error {
		cancel()
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(2 * app.DefaultShutdownTimeout):
			t.Fatal("Run did not return")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return log, stop
}

// probeAddr is where the app serves its probes, from its log.
func probeAddr(t *testing.T, log *testlog.Log) string {
	t.Helper()
	re := regexp.MustCompile(`app: serving probes .*addr=(\S+)`)
	var addr string
	require.Eventually(t, func() bool {
		for _, l := range log.Lines(slog.LevelInfo) {
			if m := re.FindStringSubmatch(l.Text); m != nil {
				addr = m[1]
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond, "the probes served")
	return "http://" + addr
}

// waitLine waits for a line of log holding text.
func waitLine(t *testing.T, log *testlog.Log, text string, d time.Duration) {
	t.Helper()
	if !assert.Eventually(t, func() bool {
		for _, l := range log.Lines(slog.LevelDebug) {
			if strings.Contains(l.Text, text) {
				return true
			}
		}
		return false
	}, d, 10*time.Millisecond) {
		t.Fatalf("no line %q in:\n%s", text, log.All())
	}
}

func get(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// decision 39, decision 20: a controller built on the app that may read
// configmaps and secrets and hold its lease but not write secrets says so
// in one Error line within 2 s, naming what to grant; its retries add no
// line, and the program does not end.
func TestAppWithoutWriteRightsIsOneErrorLine(t *testing.T) {
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	admin := client(t)
	ns := namespace(t, admin)
	grantNobody(t, admin, ns, "reads", `[{"apiGroups":[""],"resources":["configmaps","secrets"],"verbs":["get","list","watch"]},
		{"apiGroups":["coordination.k8s.io"],"resources":["leases"],"verbs":["get","create","update"]},
		{"apiGroups":["events.k8s.io"],"resources":["events"],"verbs":["create","patch"]}]`)
	_, err := admin.Resource(configMaps).Namespace(ns).Create(context.Background(),
		fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":%q,"labels":{"app":"web"}},"data":{"k":"v"}}`, ns))
	require.NoError(t, err)

	a := app.New("cm2secret")
	a.LeaderElection = true
	log, stop := runApp(t, a, copier(ns), appArgs(t, realapi.Env(t, "REALAPI_TOKEN_NOBODY"),
		"--health-addr", "", "--lease-namespace", ns, "--identity", "replica-1"))
	waitLine(t, log, "app: caches synced", wait)
	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelError)) > 0 }, 2*time.Second, 10*time.Millisecond,
		"an Error line within 2 s of the sync")
	assert.Never(t, func() bool { return len(log.Lines(slog.LevelWarn)) > 1 }, 2*time.Second, 50*time.Millisecond,
		"retries add no line")
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "%v", log.Above())
	assert.Equal(t, slog.LevelError, lines[0].Level)
	assert.Contains(t, lines[0].Text, "403")
	assert.Contains(t, lines[0].Text, `cannot patch resource "secrets"`)
	assert.Contains(t, lines[0].Text, "grant patch on secrets")
	require.NoError(t, stop(), "the program ran until stopped")
}

// decision 39: /readyz answers 503 while the caches cannot list (no RBAC
// yet: one Error line, the program waits), and 200 once RBAC is granted,
// without a restart.
func TestAppReadyOnceGranted(t *testing.T) {
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	admin := client(t)
	ns := namespace(t, admin)
	log, stop := runApp(t, app.New("cm2secret"), copier(ns), appArgs(t, realapi.Env(t, "REALAPI_TOKEN_NOBODY"),
		"--health-addr", "127.0.0.1:0"))
	probes := probeAddr(t, log)
	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelError)) > 0 }, 2*time.Second, 10*time.Millisecond,
		"the 403 said at once")
	assert.Equal(t, http.StatusServiceUnavailable, get(probes+"/readyz"), "not ready before the grant")
	assert.Equal(t, http.StatusOK, get(probes+"/healthz"), "alive: waiting is not failing")

	grantNobody(t, admin, ns, "reads", `[{"apiGroups":[""],"resources":["configmaps","secrets"],"verbs":["get","list","watch"]}]`)
	require.Eventually(t, func() bool { return get(probes+"/readyz") == http.StatusOK }, app.DefaultSyncTimeout, 50*time.Millisecond,
		"ready once granted, without a restart")
	require.NoError(t, stop())
}

// decision 39, decision 32: SIGTERM to a process whose main is App.Main
// ends it within ShutdownTimeout, exit 0, its lease released and a
// snapshot of each cache saved; started again on the same directory it
// says at Info that it restored them and listed nothing. The test binary
// runs itself as the program.
func TestAppSIGTERMReleasesLeaseSavesSnapshot(t *testing.T) {
	if args := os.Getenv("E2E_APP_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"cm2secret"}, strings.Fields(args)...)
		a := app.New("cm2secret")
		a.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
		a.Main(copier(os.Getenv("E2E_APP_NAMESPACE")))
		return
	}
	admin := client(t)
	ns := namespace(t, admin)
	_, err := admin.Resource(configMaps).Namespace(ns).Create(context.Background(),
		fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web","namespace":%q,"labels":{"app":"web"}},"data":{"k":"v"}}`, ns))
	require.NoError(t, err)
	dir := t.TempDir()
	args := appArgs(t, realapi.Env(t, "REALAPI_TOKEN"), "--health-addr=", "--leader-elect", "--lease-namespace", ns,
		"--identity", "child", "--snapshot-dir", dir)
	cmd := exec.Command(os.Args[0], "-test.run=^TestAppSIGTERMReleasesLeaseSavesSnapshot$")
	cmd.Env = append(os.Environ(), "E2E_APP_MAIN_ARGS="+strings.Join(args, " "), "E2E_APP_NAMESPACE="+ns)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	leading, exited := make(chan struct{}), make(chan error, 1)
	var childLog syncBuffer
	go func() {
		sc := bufio.NewScanner(stderr)
		for led := false; sc.Scan(); {
			fmt.Fprintln(&childLog, sc.Text())
			if !led && strings.Contains(sc.Text(), "app: leader") && strings.Contains(sc.Text(), "self=true") {
				led = true
				close(leading)
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-leading:
	case err := <-exited:
		t.Fatalf("the child exited (%v):\n%s", err, childLog.String())
	case <-time.After(wait):
		_ = cmd.Process.Kill()
		t.Fatalf("the child did not lead:\n%s", childLog.String())
	}
	require.Eventually(t, func() bool {
		_, err := admin.Resource(secrets).Namespace(ns).Get(context.Background(), "web-copy")
		return err == nil
	}, wait, 50*time.Millisecond, "the secret copied")

	signalled := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit 0")
		t.Logf("exited %v after SIGTERM (bound %v)\n%s", time.Since(signalled).Round(time.Millisecond), app.DefaultShutdownTimeout, childLog.String())
	case <-time.After(app.DefaultShutdownTimeout):
		_ = cmd.Process.Kill()
		t.Fatalf("not stopped within the shutdown bound, %v", app.DefaultShutdownTimeout)
	}
	lease, err := admin.Resource(leases).Namespace(ns).Get(context.Background(), "cm2secret")
	require.NoError(t, err)
	assert.Empty(t, lease.Get("spec.holderIdentity").String(), "lease released")
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.Len(t, files, 2, "a snapshot per cache")

	// Started again: warm, and said so.
	a := app.New("cm2secret")
	log, stop := runApp(t, a, copier(ns), appArgs(t, realapi.Env(t, "REALAPI_TOKEN"), "--health-addr", "", "--snapshot-dir", dir))
	waitLine(t, log, "app: caches synced", wait)
	require.NoError(t, stop())
	var restored, confirmed int
	for _, l := range log.Lines(slog.LevelInfo) {
		if l.Level == slog.LevelInfo && strings.Contains(l.Text, "informer: restored snapshot") {
			restored++
		}
		if l.Level == slog.LevelInfo && strings.Contains(l.Text, "listed nothing") {
			confirmed++
		}
	}
	assert.Equal(t, 2, restored, "each cache's restore said at Info:\n%s", log.All())
	assert.Equal(t, 2, confirmed, "each cache's confirmation said at Info:\n%s", log.All())
	for r, inf := range a.Factory().Informers() {
		assert.Zero(t, inf.Stats().Lists, "%s listed", r)
	}
}

func sameBytes(b []byte, s string) bool { return string(b) == s }
