package e2e

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reconfigureAPIServer makes the kube-apiserver scripts/realapi.sh started
// run with some flags changed, restarting it if any flag changes. When the
// test ends the server is restarted with its former flags, so that no other
// test sees this configuration and the order of tests does not matter.
func reconfigureAPIServer(t *testing.T, flags map[string]string) {
	t.Helper()
	dir := realapi.Env(t, "REALAPI_DIR")
	b, err := os.ReadFile(filepath.Join(dir, "apiserver.args"))
	require.NoError(t, err)
	before := strings.TrimSpace(string(b))
	after := withFlags(before, flags)
	if after == before {
		return
	}
	restartAPIServer(t, dir, after)
	t.Cleanup(func() { restartAPIServer(t, dir, before) })
}

// withFlags returns args, one flag a line, with flags set to their values.
func withFlags(args string, flags map[string]string) string {
	var out []string
	seen := map[string]bool{}
	for _, a := range strings.Split(args, "\n") {
		name, _, _ := strings.Cut(a, "=")
		if v, ok := flags[name]; ok {
			a = name + "=" + v
			seen[name] = true
		}
		out = append(out, a)
	}
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		if !seen[name] {
			out = append(out, name+"="+flags[name])
		}
	}
	return strings.Join(out, "\n")
}

// restartAPIServer kills the kube-apiserver in dir and starts it again with
// args (one flag a line), then waits until it is ready.
func restartAPIServer(t *testing.T, dir, args string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		return strings.TrimSpace(string(b))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "apiserver.args"), []byte(args+"\n"), 0o644))
	pid, err := strconv.Atoi(read("kube-apiserver.pid"))
	require.NoError(t, err)
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(syscall.SIGKILL) // killed, not drained: the way a crash looks to clients
	}
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, wait, 100*time.Millisecond, "old kube-apiserver did not exit")

	logf, err := os.OpenFile(filepath.Join(dir, "kube-apiserver.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer logf.Close()
	cmd := exec.Command(read("apiserver.bin"), strings.Split(args, "\n")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kube-apiserver.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644))
	go func() { _ = cmd.Wait() }() // reap it if it exits while the tests run
	ready(t, config(t))
}

// compactEtcd compacts the etcd behind the kube-apiserver up to revision.
func compactEtcd(t *testing.T, revision string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realapi.Env(t, "REALAPI_DIR"), "apiserver.args"))
	require.NoError(t, err)
	var etcd string
	for _, a := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(a, "--etcd-servers="); ok {
			etcd = strings.Split(v, ",")[0]
		}
	}
	require.NotEmpty(t, etcd, "no --etcd-servers in apiserver.args")
	resp, err := http.Post(etcd+"/v3/kv/compaction", "application/json",
		strings.NewReader(fmt.Sprintf(`{"revision":%q,"physical":true}`, revision)))
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "etcd compaction: %s", body)
}

// The kube-apiserver is killed and restarted mid-watch (with the watch cache
// off, then etcd compacted). The cache converges, and no
// notification is lost or doubled: objects untouched across the restart get
// none. An informer resuming from a version compacted away gets 410, relists
// and converges.
func TestRestartMidWatchAndCompaction(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	ctx := context.Background()
	for i := range 20 {
		_, err := rc.Create(ctx, configMap(ns, fmt.Sprintf("cm-%02d", i), "0"))
		require.NoError(t, err)
	}
	inf := listwatch.NewInformer(rc, 0)
	var errMu sync.Mutex
	var watchErrs []error
	inf.OnError = func(err error) { errMu.Lock(); watchErrs = append(watchErrs, err); errMu.Unlock() }
	ev := newEvents()
	reg, err := inf.AddEventHandler(ev)
	require.NoError(t, err)
	run(t, inf)
	require.Eventually(t, reg.HasSynced, wait, 10*time.Millisecond)
	oldRV := inf.LastSyncResourceVersion()

	reconfigureAPIServer(t, map[string]string{"--watch-cache": "false"})

	for i := range 5 {
		name := fmt.Sprintf("cm-%02d", i)
		o, err := rc.Get(ctx, name)
		require.NoError(t, err)
		_, err = rc.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"resourceVersion":%q},"data":{"v":"1"}}`,
			name, ns, o.ResourceVersion()))
		require.NoError(t, err)
	}
	require.NoError(t, rc.Delete(ctx, "cm-19"))
	_, err = rc.Create(ctx, configMap(ns, "cm-new", "1"))
	require.NoError(t, err)
	converges(t, inf, rc)
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverState(t, rc), ev.state()) }, wait, 10*time.Millisecond,
		"the handler's view equals the server")
	ev.mu.Lock()
	assert.Empty(t, ev.back, "no resourceVersion went backwards")
	ev.mu.Unlock()
	for i := 5; i < 19; i++ {
		key := fmt.Sprintf("%s/cm-%02d", ns, i)
		assert.Equal(t, []string{"add " + key}, filter(ev.lines(), key), "an object untouched across the restart gets no second notification")
	}
	for i := range 5 {
		key := fmt.Sprintf("%s/cm-%02d", ns, i)
		assert.Equal(t, []string{"add " + key, "update " + key}, filter(ev.lines(), key))
	}
	errMu.Lock()
	assert.NotEmpty(t, watchErrs, "the restart was reported to the watch error handler")
	errMu.Unlock()

	// Compact etcd up to now through its JSON gateway, rather than wait for
	// the apiserver's compactor: an exact read of oldRV is then refused.
	latest, err := rc.ListPage(ctx, httpwatch.ListOptions{Limit: 1})
	require.NoError(t, err)
	compactEtcd(t, latest.ResourceVersion)
	_, err = rc.ListPage(ctx, httpwatch.ListOptions{ResourceVersion: oldRV, ResourceVersionMatch: "Exact", Limit: 1})
	require.True(t, httpwatch.IsGone(err), "a read at a compacted version is refused: %v", err)

	resumed := listwatch.NewInformer(rc, 0)
	resumed.Reflector.ResourceVersion = oldRV
	var gone bool
	var goneMu sync.Mutex
	resumed.OnError = func(err error) {
		goneMu.Lock()
		gone = gone || httpwatch.IsGone(err)
		goneMu.Unlock()
	}
	ctx2, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { resumed.Run(ctx2); close(done) }()
	defer func() { cancel(); testwait.RecvWithin(t, done, wait, "Run to return after cancel") }()
	converges(t, resumed, rc)
	goneMu.Lock()
	assert.True(t, gone, "the resumed watch was refused with 410")
	goneMu.Unlock()
	assert.EqualValues(t, 1, resumed.Stats().Lists, "it relisted once")
}

// A token without rights under RBAC gets a clear Forbidden error, from a
// list, a watch and an informer. A server not started with
// REALAPI_AUTHZ=RBAC is restarted with RBAC for the test.
func TestForbiddenUnderRBAC(t *testing.T) {
	cfg := config(t)
	nobody := realapi.Env(t, "REALAPI_TOKEN_NOBODY")
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	cfg.BearerToken = nobody
	c, err := httpwatch.NewClient(cfg)
	require.NoError(t, err)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	ctx := ctxTimeout(t, wait)

	_, err = rc.ListPage(ctx, httpwatch.ListOptions{})
	require.True(t, httpwatch.IsForbidden(err), "list: %v", err)
	var se *httpwatch.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 403, se.Code)
	assert.Contains(t, err.Error(), `cannot list resource "pods"`)

	_, err = rc.Watch(ctx, httpwatch.ListOptions{})
	assert.True(t, httpwatch.IsForbidden(err), "watch: %v", err)

	inf := listwatch.NewInformer(rc, 0)
	first := make(chan error, 1)
	inf.OnError = func(err error) {
		select {
		case first <- err:
		default:
		}
	}
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { inf.Run(ictx); close(done) }()
	defer func() { cancel(); testwait.RecvWithin(t, done, wait, "Run to return after cancel") }()
	select {
	case err := <-first:
		var sync *reflector.SyncError
		require.True(t, errors.As(err, &sync), "%v", err)
		assert.True(t, httpwatch.IsForbidden(err), "%v", err)
	case <-ctx.Done():
		t.Fatal("the informer reported no error")
	}
	assert.False(t, inf.HasSynced())
}
