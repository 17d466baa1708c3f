package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/realapi"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// verbCounter counts the requests of one resource by verb.
type verbCounter struct {
	resource string
	mu       sync.Mutex
	n        map[string]int
}

func (v *verbCounter) Observe(i httpwatch.RequestInfo) {
	if i.Resource != v.resource {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.n[i.Verb]++
}

func (v *verbCounter) take() map[string]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n := v.n
	v.n = map[string]int{}
	return n
}

// startInformer runs inf until the returned stop, which waits for Run.
func startInformer(t *testing.T, inf *listwatch.Informer) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() { cancel(); testwait.RecvWithin(t, done, wait, "Run to return after cancel") })
	}
	t.Cleanup(stop)
	return stop
}

// decision 32 on the real server: an agent restarted with its snapshot —
// saved when it stopped, or periodically by an agent process killed with
// SIGKILL — reaches synced with no list, converges with what changed while
// it was down, and its handler hears adds for the snapshot and the changes
// as what they are.
func TestWarmStartOnRealServer(t *testing.T) {
	for _, how := range []string{"stop", "sigkill"} {
		t.Run(how, func(t *testing.T) {
			c := client(t)
			ns := namespace(t, c)
			res := httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns}
			rc := c.Resource(res) // the test's reads and writes
			ctx := context.Background()
			for i := range 10 {
				_, err := rc.Create(ctx, configMap(ns, fmt.Sprintf("cm-%02d", i), "0"))
				require.NoError(t, err)
			}
			dir := t.TempDir()
			opts := snapshot.Options{Dir: dir, Interval: 200 * time.Millisecond}
			path := filepath.Join(dir, "configmaps.v1_"+ns+".snap")
			if how == "stop" {
				first := listwatch.NewInformer(client(t).Resource(res), 0)
				first.Snapshot = opts
				stop := startInformer(t, first)
				require.NoError(t, first.WaitForSync(ctxTimeout(t, wait)))
				stop()
			} else {
				killedAgent(t, ns, dir, path)
			}

			o, err := rc.Get(ctx, "cm-01")
			require.NoError(t, err)
			_, err = rc.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-01","namespace":%q,"resourceVersion":%q},"data":{"v":"1"}}`, ns, o.ResourceVersion()))
			require.NoError(t, err)
			require.NoError(t, rc.Delete(ctx, "cm-02"))
			_, err = rc.Create(ctx, configMap(ns, "cm-new", "1"))
			require.NoError(t, err)

			agent := client(t) // the restarted agent's, its requests counted
			counts := &verbCounter{resource: "configmaps", n: map[string]int{}}
			agent.Metrics = counts
			second := listwatch.NewInformer(agent.Resource(res), 0)
			second.Snapshot = opts
			ev := newEvents()
			_, err = second.AddEventHandler(ev)
			require.NoError(t, err)
			startInformer(t, second)
			testwait.RecvWithin(t, second.Loaded(), wait, "the snapshot to be restored")
			require.NoError(t, second.WaitForSync(ctxTimeout(t, wait)))
			converges(t, second, rc)
			require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverState(t, rc), ev.state()) }, wait, 10*time.Millisecond)

			n := counts.take()
			assert.Zero(t, n["list"], "no list: %v", n)
			assert.Equal(t, 1, n["watch"], "one watch, from the snapshot's version: %v", n)
			assert.Zero(t, second.Stats().Lists)
			lines := ev.lines()
			require.Len(t, lines, 13, "%q", lines)
			for i := range 10 {
				assert.Contains(t, lines[:10], fmt.Sprintf("add %s/cm-%02d", ns, i))
			}
			changes := slices.Clone(lines[10:])
			slices.Sort(changes)
			assert.Equal(t, []string{"add " + ns + "/cm-new", "delete " + ns + "/cm-02", "update " + ns + "/cm-01"}, changes)
		})
	}
}

// agentEnv, set, makes the test binary an agent (see runAgent).
const agentEnv = "LISTWATCH_E2E_AGENT"

// killedAgent runs this test binary as an agent keeping snapshots of the
// configmaps of ns in dir, waits for its periodic save of the whole
// namespace, and kills it with SIGKILL: it never saves at stop.
func killedAgent(t *testing.T, ns, dir, path string) {
	t.Helper()
	realapi.Env(t, "REALAPI_URL")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), agentEnv+"="+ns+" "+dir)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	// The agent saves once synced, so its first save holds the namespace.
	// Read with a key of no informer, a whole file is a mismatch.
	require.Eventually(t, func() bool {
		_, err := snapshot.ReadFile(path, snapshot.Key{}, snapshot.Limits{})
		return errors.Is(err, snapshot.ErrMismatch)
	}, wait, 10*time.Millisecond, "the agent's periodic save")
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()
	_, err := os.Stat(path)
	require.NoError(t, err)
}

// runAgent is the agent killedAgent kills: an informer of the configmaps
// of a namespace saving a snapshot every 200 ms, until killed.
func runAgent(spec string) {
	ns, dir, _ := strings.Cut(spec, " ")
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: os.Getenv("REALAPI_URL"), BearerToken: os.Getenv("REALAPI_TOKEN"), CAFile: os.Getenv("REALAPI_CA"), QPS: -1})
	if err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(2)
	}
	inf := listwatch.NewInformer(c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns}), 0)
	inf.Snapshot = snapshot.Options{Dir: dir, Interval: 200 * time.Millisecond}
	inf.Run(context.Background())
	os.Exit(3) // never: it is killed
}

// decision 32 on the real server: a snapshot whose version etcd compacted
// away (watch cache off, so the watch reads etcd) relists exactly once,
// and only what changed is heard of.
func TestWarmStartAfterCompactionOnRealServer(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	res := httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns}
	rc := c.Resource(res)
	ctx := context.Background()
	for i := range 10 {
		_, err := rc.Create(ctx, configMap(ns, fmt.Sprintf("cm-%02d", i), "0"))
		require.NoError(t, err)
	}
	opts := snapshot.Options{Dir: t.TempDir()}
	first := listwatch.NewInformer(rc, 0)
	first.Snapshot = opts
	stop := startInformer(t, first)
	require.NoError(t, first.WaitForSync(ctxTimeout(t, wait)))
	converges(t, first, rc)
	stop()

	reconfigureAPIServer(t, map[string]string{"--watch-cache": "false"})
	o, err := rc.Get(ctx, "cm-01")
	require.NoError(t, err)
	_, err = rc.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm-01","namespace":%q,"resourceVersion":%q},"data":{"v":"1"}}`, ns, o.ResourceVersion()))
	require.NoError(t, err)
	require.NoError(t, rc.Delete(ctx, "cm-02"))
	latest, err := rc.ListPage(ctx, httpwatch.ListOptions{Limit: 1})
	require.NoError(t, err)
	compactEtcd(t, latest.ResourceVersion)

	agent := client(t)
	counts := &verbCounter{resource: "configmaps", n: map[string]int{}}
	agent.Metrics = counts
	second := listwatch.NewInformer(agent.Resource(res), 0)
	second.Snapshot = opts
	ev := newEvents()
	_, err = second.AddEventHandler(ev)
	require.NoError(t, err)
	startInformer(t, second)
	require.NoError(t, second.WaitForSync(ctxTimeout(t, wait)))
	converges(t, second, rc)
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverState(t, rc), ev.state()) }, wait, 10*time.Millisecond)
	lines := ev.lines()
	require.Len(t, lines, 12, "%q", lines)
	changes := slices.Clone(lines[10:])
	slices.Sort(changes)
	assert.Equal(t, []string{"delete " + ns + "/cm-02", "update " + ns + "/cm-01"}, changes, "unchanged objects stay silent")
	assert.EqualValues(t, 1, second.Stats().Lists, "relisted exactly once")
	// The resumed watch and its 410, then the relist: a watch-list stream.
	n := counts.take()
	assert.Equal(t, 2, n["list"]+n["watch"], "%v", n)
}
