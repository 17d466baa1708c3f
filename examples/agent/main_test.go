package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/httpwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// output collects what run writes, line by line, and lets a test wait for a
// line matching a pattern.
type output struct {
	mu      sync.Mutex
	partial bytes.Buffer
	lines   []string
	changed chan struct{} // closed and replaced on every new line
}

func newOutput() *output { return &output{changed: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.partial.Write(p)
	for {
		line, err := o.partial.ReadString('\n')
		if err == io.EOF {
			o.partial.WriteString(line) // keep the unfinished line
			break
		}
		o.lines = append(o.lines, strings.TrimSuffix(line, "\n"))
		close(o.changed)
		o.changed = make(chan struct{})
	}
	return len(p), nil
}

// Lines returns every complete line so far.
func (o *output) Lines() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.lines...)
}

// waitFor blocks until done reports true of the lines so far, or fails the
// test when ctx ends first.
func (o *output) waitFor(ctx context.Context, t *testing.T, what string, done func([]string) bool) {
	t.Helper()
	for {
		o.mu.Lock()
		ok, changed := done(o.lines), o.changed
		o.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatalf("never saw %s; output:\n%s", what, strings.Join(o.Lines(), "\n"))
		}
	}
}

func contains(re string) func([]string) bool {
	r := regexp.MustCompile(re)
	return func(lines []string) bool {
		for _, l := range lines {
			if r.MatchString(l) {
				return true
			}
		}
		return false
	}
}

// started is run going in the background.
type started struct {
	stdout, stderr *output
	stop           context.CancelFunc // as SIGINT would
	err            chan error
}

// demoEnv makes sure run picks the embedded demo server, even in a pod.
func demoEnv(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("NODE_NAME", "")
}

func start(ctx context.Context, args ...string) *started {
	ctx, stop := context.WithCancel(ctx)
	s := &started{stdout: newOutput(), stderr: newOutput(), stop: stop, err: make(chan error, 1)}
	go func() { s.err <- run(ctx, args, s.stdout, s.stderr) }()
	return s
}

// wait returns run's error once it has returned.
func (s *started) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.err:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return")
		return nil
	}
}

// lastMatching returns the last line matching re, or "".
func lastMatching(lines []string, re string) string {
	r := regexp.MustCompile(re)
	for i := len(lines) - 1; i >= 0; i-- {
		if r.MatchString(lines[i]) {
			return lines[i]
		}
	}
	return ""
}

// On the demo server the agent sees only node-1's ten pods, sums them up at
// sync, reports on its period while the demo churns, and once more at exit.
func TestDemoSummarisesNode1(t *testing.T) {
	demoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--every", "20ms")
	r.stdout.waitFor(ctx, t, "a periodic report", contains(`^report `))
	r.stop()
	require.NoError(t, r.wait(t))

	lines := r.stdout.Lines()
	// Pods 0, 3, ..., 27: phases cycle by i/3, odd pods have two
	// containers, the first container has restarted i%4 times.
	assert.Equal(t, "synced  node-1: 10 pods (Pending=4 Running=3 Succeeded=3), 15 containers, 15 restarts", lines[0])
	summary := regexp.MustCompile(`^(report |exit   ) node-1: \d+ pods \((\w+=\d+ ?)*\), \d+ containers, \d+ restarts$`)
	for _, l := range lines[1:] {
		assert.Regexp(t, summary, l)
	}
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "exit    node-1: "), "last line %q", lines[len(lines)-1])
	assert.Contains(t, r.stderr.Lines()[0], "agent for node node-1 on http://127.0.0.1:")
}

// NODE_NAME, as the downward API sets it, chooses the node.
func TestNodeNameFromEnvironment(t *testing.T) {
	demoEnv(t)
	t.Setenv("NODE_NAME", "node-3")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--every", "1h", "--metadata-only")
	r.stdout.waitFor(ctx, t, "the first summary", contains(`^synced `))
	r.stop()
	require.NoError(t, r.wait(t))
	assert.Equal(t, "synced  node-3: 10 pods (metadata only)", r.stdout.Lines()[0])
}

// Against a server of our own: the field selector reaches the server, only
// the node's pods count, and changes and deletions show in the next report.
func TestServerFlagWatchesOneNodeOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := watchtest.NewServer()
	defer s.Close()
	pod := func(name, node, phase string, restarts ...int) string {
		var specs, statuses []string
		for i, n := range restarts {
			specs = append(specs, fmt.Sprintf(`{"name":"c%d"}`, i))
			statuses = append(statuses, fmt.Sprintf(`{"name":"c%d","restartCount":%d}`, i, n))
		}
		return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"spec":{"nodeName":%q,"containers":[%s]},"status":{"phase":%q,"containerStatuses":[%s]}}`,
			name, node, strings.Join(specs, ","), phase, strings.Join(statuses, ","))
	}
	for _, p := range []string{
		pod("a", "node-a", "Running", 1, 2),
		pod("b", "node-a", "Pending", 0),
		pod("c", "node-b", "Running", 7, 7, 7),
	} {
		_, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}

	r := start(ctx, "--server", s.URL, "--node", "node-a", "--every", "10ms")
	r.stdout.waitFor(ctx, t, "the first summary", contains(`^synced `))
	assert.Equal(t, "synced  node-a: 2 pods (Pending=1 Running=1), 3 containers, 3 restarts", r.stdout.Lines()[0])

	_, err := s.Update(watchtest.Pods, pod("b", "node-a", "Running", 4))
	require.NoError(t, err)
	_, err = s.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	const after = "node-a: 1 pods (Running=1), 1 containers, 4 restarts"
	r.stdout.waitFor(ctx, t, "a report after the changes", contains(`^report  `+regexp.QuoteMeta(after)+`$`))
	r.stop()
	require.NoError(t, r.wait(t))
	assert.Equal(t, "exit    "+after, lastMatching(r.stdout.Lines(), `^exit`))

	var selectors []string
	for _, req := range s.Requests() {
		if req.Verb == "list" || req.Verb == "watch" {
			selectors = append(selectors, req.Query.Get("fieldSelector"))
		}
	}
	require.NotEmpty(t, selectors)
	for _, sel := range selectors {
		assert.Equal(t, "spec.nodeName=node-a", sel, "every list and watch is filtered by the server")
	}
}

func TestConnectionErrors(t *testing.T) {
	t.Run("in-cluster without a service account", func(t *testing.T) {
		if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
			t.Skip("running in a pod: the in-cluster config would work")
		}
		t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
		err := run(t.Context(), []string{"--node", "n"}, io.Discard, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "in-cluster config (KUBERNETES_SERVICE_HOST is set)")
	})
	t.Run("no node outside the demo", func(t *testing.T) {
		t.Setenv("NODE_NAME", "")
		err := run(t.Context(), []string{"--server", "http://127.0.0.1:1"}, io.Discard, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no node to watch: set --node or NODE_NAME")
	})
	t.Run("unreachable server", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		err := run(ctx, []string{"--server", "http://127.0.0.1:1", "--node", "n"}, io.Discard, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "cannot reach the server at http://127.0.0.1:1")
	})
}

// --duration ends the run by itself, with the final summary.
func TestDurationEndsTheRun(t *testing.T) {
	demoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--duration", "2s", "--node", "node-2")
	require.NoError(t, r.wait(t))
	require.NoError(t, ctx.Err(), "run returned on its own")
	assert.True(t, contains(`^exit    node-2: `)(r.stdout.Lines()))
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--every", "0s"}, "--every must be positive"},
		{[]string{"node-1"}, `unexpected argument "node-1"`},
		{[]string{"--no-such-flag"}, "flag provided but not defined"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard, io.Discard)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	err := run(t.Context(), []string{"-h"}, io.Discard, io.Discard)
	assert.ErrorIs(t, err, flag.ErrHelp)
}
