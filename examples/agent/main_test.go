package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// demoEnv makes sure run picks the embedded demo server, even in a pod,
// and its default node.
func demoEnv(t *testing.T) {
	clitest.DemoEnv(t)
	t.Setenv("NODE_NAME", "")
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
	r := clitest.Start(ctx, run, "--every", "20ms")
	r.Stdout.WaitFor(ctx, t, "a periodic report", clitest.Contains(`^report `))
	r.Stop()
	require.NoError(t, r.Wait(t))

	lines := r.Stdout.Lines()
	// Pods 0, 3, ..., 27: phases cycle by i/3, odd pods have two
	// containers, the first container has restarted i%4 times.
	assert.Equal(t, "synced  node-1: 10 pods (Pending=4 Running=3 Succeeded=3), 15 containers, 15 restarts", lines[0])
	summary := regexp.MustCompile(`^(report |exit   ) node-1: \d+ pods \((\w+=\d+ ?)*\), \d+ containers, \d+ restarts$`)
	for _, l := range lines[1:] {
		assert.Regexp(t, summary, l)
	}
	assert.True(t, strings.HasPrefix(lines[len(lines)-1], "exit    node-1: "), "last line %q", lines[len(lines)-1])
	assert.Contains(t, r.Stderr.Lines()[0], "agent for node node-1 on http://127.0.0.1:")
}

// NODE_NAME, as the downward API sets it, chooses the node.
func TestNodeNameFromEnvironment(t *testing.T) {
	demoEnv(t)
	t.Setenv("NODE_NAME", "node-3")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--every", "1h", "--metadata-only")
	r.Stdout.WaitFor(ctx, t, "the first summary", clitest.Contains(`^synced `))
	r.Stop()
	require.NoError(t, r.Wait(t))
	assert.Equal(t, "synced  node-3: 10 pods (metadata only)", r.Stdout.Lines()[0])
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

	r := clitest.Start(ctx, run, "--server", s.URL, "--node", "node-a", "--every", "10ms")
	r.Stdout.WaitFor(ctx, t, "the first summary", clitest.Contains(`^synced `))
	assert.Equal(t, "synced  node-a: 2 pods (Pending=1 Running=1), 3 containers, 3 restarts", r.Stdout.Lines()[0])

	_, err := s.Update(watchtest.Pods, pod("b", "node-a", "Running", 4))
	require.NoError(t, err)
	_, err = s.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	const after = "node-a: 1 pods (Running=1), 1 containers, 4 restarts"
	r.Stdout.WaitFor(ctx, t, "a report after the changes", clitest.Contains(`^report  `+regexp.QuoteMeta(after)+`$`))
	r.Stop()
	require.NoError(t, r.Wait(t))
	assert.Equal(t, "exit    "+after, lastMatching(r.Stdout.Lines(), `^exit`))

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
	r := clitest.Start(ctx, run, "--duration", "2s", "--node", "node-2")
	require.NoError(t, r.Wait(t))
	require.NoError(t, ctx.Err(), "run returned on its own")
	assert.True(t, clitest.Contains(`^exit    node-2: `)(r.Stdout.Lines()))
}

func TestBadFlags(t *testing.T) {
	clitest.RejectsFlags(t, run, []clitest.BadArgs{
		{Args: []string{"--every", "0s"}, Want: "--every must be positive"},
		{Args: []string{"node-1"}, Want: `unexpected argument "node-1"`},
		{Args: []string{"--no-such-flag"}, Want: "flag provided but not defined"},
	})
}
