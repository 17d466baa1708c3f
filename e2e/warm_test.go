package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
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
				require.NoError(t, first.Wait(ctxTimeout(t, wait)))
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
			agent.Metrics = counts.Observe
			second := listwatch.NewInformer(agent.Resource(res), 0)
			second.Snapshot = opts
			log := &testlog.Log{}
			second.Logger = slog.New(log)
			ev := newEvents()
			_, err = second.AddEventHandler(ev)
			require.NoError(t, err)
			startInformer(t, second)
			require.NoError(t, second.Wait(ctxTimeout(t, wait)))
			require.Positive(t, second.Stats().Snapshot.Restored, "the snapshot was restored")
			converges(t, second, rc)
			require.Eventually(t, func() bool { return assert.ObjectsAreEqual(serverState(t, rc), ev.state()) }, wait, 10*time.Millisecond)

			n := counts.take()
			assert.Zero(t, n["list"], "no list: %v", n)
			assert.Equal(t, 1, n["watch"], "one watch, from the snapshot's version: %v", n)
			assert.Zero(t, second.Stats().Lists)
			// Said at Info (decision 32): what was restored, from which
			// version, and that the server confirmed it with no list.
			said := log.Lines(slog.LevelInfo)
			require.Len(t, said, 2, "%v", log.Above())
			assert.Contains(t, said[0].Text, "informer: restored snapshot; awaiting the server's confirmation")
			assert.Contains(t, said[0].Text, "objects=10 resourceVersion="+second.Stats().Snapshot.RestoredVersion)
			assert.Contains(t, said[1].Text, "informer: warm start confirmed by the server; listed nothing")
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
	// With the watch cache off a 410 comes from etcd, up to about 270 ms
	// after the response: the ConfirmAfter the docs advise then.
	opts := snapshot.Options{Dir: t.TempDir(), ConfirmAfter: 500 * time.Millisecond}
	first := listwatch.NewInformer(rc, 0)
	first.Snapshot = opts
	stop := startInformer(t, first)
	require.NoError(t, first.Wait(ctxTimeout(t, wait)))
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
	agent.Metrics = counts.Observe
	second := listwatch.NewInformer(agent.Resource(res), 0)
	second.Snapshot = opts
	ev := newEvents()
	_, err = second.AddEventHandler(ev)
	require.NoError(t, err)
	startInformer(t, second)
	require.NoError(t, second.Wait(ctxTimeout(t, wait)))
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

// watchFrame is what a watch gave: its first event or error, and when it
// came after the server's response.
type watchFrame struct {
	ev    httpwatch.Event
	err   error
	after time.Duration
}

// resumeWatch opens a watch of res from rv as a warm start's resumed watch
// does, and returns its frames as they come.
func resumeWatch(t *testing.T, rc *httpwatch.ResourceClient, rv string) <-chan watchFrame {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := rc.Watch(ctx, httpwatch.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true, TimeoutSeconds: 300})
	require.NoError(t, err, "the server answers a watch from any version with 200")
	opened := time.Now()
	frames := make(chan watchFrame, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(frames)
		for {
			ev, err := w.Next()
			frames <- watchFrame{ev, err, time.Since(opened)}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		w.Stop()
		cancel()
		testwait.RecvWithin(t, done, wait, "the watch to end")
	})
	return frames
}

// decision 32 on the real server, the facts the warm start's confirmation
// (snapshot.Options.ConfirmAfter) rests on: a watch resumed from a version
// the server still holds gets no bookmark while nothing changes — the
// first frame is the first change —, and one from a version the server
// forgot gets 200, then a 410 ERROR event, and its end, whether from the
// watch cache or, with the cache off, from etcd. How soon the 410 came
// after the response is logged (measured: from the watch cache a median of
// 40 µs, the slowest of 600 on 2 busy cores 19 ms; from etcd 9–270 ms).
func TestResumedWatchOnRealServer(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	ctx := context.Background()
	_, err := rc.Create(ctx, configMap(ns, "cm-a", "0"))
	require.NoError(t, err)
	page, err := rc.ListPage(ctx, httpwatch.ListOptions{})
	require.NoError(t, err)

	quiet := resumeWatch(t, rc, page.ResourceVersion)
	select {
	case f := <-quiet:
		t.Fatalf("a quiet resumed watch sent %s %v after %v: the server confirms resumed watches on its own, ConfirmAfter is not needed", f.ev.Type, f.err, f.after)
	case <-time.After(time.Second): // no bookmark comes within a second
	}
	_, err = rc.Create(ctx, configMap(ns, "cm-b", "0"))
	require.NoError(t, err)
	f := testwait.RecvWithin(t, quiet, wait, "the change on the resumed watch")
	require.NoError(t, f.err)
	require.Equal(t, httpwatch.Added, f.ev.Type)
	assert.Equal(t, "cm-b", f.ev.Object.Name(), "the first frame is the change")

	forgotten := func(t *testing.T, from string) {
		t.Helper()
		frames := resumeWatch(t, rc, page.ResourceVersion)
		f := testwait.RecvWithin(t, frames, wait, "the 410 "+from)
		require.NoError(t, f.err)
		require.Equal(t, httpwatch.Error, f.ev.Type, "the first frame")
		assert.True(t, httpwatch.IsGone(f.ev.Err), "%v", f.ev.Err)
		t.Logf("410 %s %v after the response: %v", from, f.after, f.ev.Err)
		end := testwait.RecvWithin(t, frames, wait, "the end of the refused watch")
		assert.Error(t, end.err, "nothing follows the 410 but the end")
	}
	t.Run("watch cache", func(t *testing.T) {
		// A restarted server's watch cache starts at its current version
		// and forgets every older one.
		dir := realapi.Env(t, "REALAPI_DIR")
		args, err := os.ReadFile(filepath.Join(dir, "apiserver.args"))
		require.NoError(t, err)
		restartAPIServer(t, dir, strings.TrimSpace(string(args)))
		forgotten(t, "from the watch cache")
	})
	t.Run("etcd", func(t *testing.T) {
		reconfigureAPIServer(t, map[string]string{"--watch-cache": "false"})
		_, err := rc.Create(ctx, configMap(ns, "cm-c", "0"))
		require.NoError(t, err)
		latest, err := rc.ListPage(ctx, httpwatch.ListOptions{Limit: 1})
		require.NoError(t, err)
		compactEtcd(t, latest.ResourceVersion)
		forgotten(t, "from etcd")
	})
}
