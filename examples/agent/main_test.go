package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// start runs the agent with args until the test ends; it returns its log
// and a function that stops it and returns Run's error.
func start(t *testing.T, args ...string) (*testlog.Log, func() error) {
	t.Helper()
	a := newApp()
	logger, log := testlog.NewLogger()
	a.Logger = logger
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, append([]string{"--health-addr", "", "--snapshot-dir", ""}, args...), setup)
	}()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			done <- err
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Run did not return")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return log, stop
}

// summaries returns the summaries logged so far.
func summaries(log *testlog.Log) []string {
	var out []string
	for _, l := range log.Lines(slog.LevelInfo) {
		if strings.HasPrefix(l.Text, "pods ") {
			out = append(out, l.Text)
		}
	}
	return out
}

// waitSummary waits for a summary matching re.
func waitSummary(t *testing.T, log *testlog.Log, re string) {
	t.Helper()
	r := regexp.MustCompile(re)
	if !assert.Eventually(t, func() bool { return r.MatchString(strings.Join(summaries(log), "\n")) }, 10*time.Second, 5*time.Millisecond) {
		t.Fatalf("no summary matching %s in:\n%s", re, log.All())
	}
}

// On the demo server the agent sees only node-1's ten pods, sums them up
// once synced, and reports on its period while the demo churns.
func TestDemoSummarisesNode1(t *testing.T) {
	clitest.DemoEnv(t)
	t.Setenv("NODE_NAME", "")
	log, stop := start(t, "--every", "20ms")
	// Pods 0, 3, ..., 27: phases cycle by i/3, the first container has
	// restarted i%4 times.
	waitSummary(t, log, `^pods node=node-1 count=10 phases=map\[Pending:4 Running:3 Succeeded:3\] restarts=15`)
	require.Eventually(t, func() bool { return len(summaries(log)) >= 3 }, 10*time.Second, 5*time.Millisecond, "periodic")
	require.NoError(t, stop())
	assert.Empty(t, log.Lines(slog.LevelWarn))
}

func pod(name, node, phase string, restarts ...int) string {
	var specs, statuses []string
	for i, n := range restarts {
		specs = append(specs, fmt.Sprintf(`{"name":"c%d"}`, i))
		statuses = append(statuses, fmt.Sprintf(`{"name":"c%d","restartCount":%d}`, i, n))
	}
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"spec":{"nodeName":%q,"containers":[%s]},"status":{"phase":%q,"containerStatuses":[%s]}}`,
		name, node, strings.Join(specs, ","), phase, strings.Join(statuses, ","))
}

func podServer(t *testing.T) *watchtest.Server {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	for _, p := range []string{pod("a", "node-a", "Running", 1, 2), pod("b", "node-a", "Pending", 0), pod("c", "node-b", "Running", 7, 7, 7)} {
		_, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	return s
}

// Against a server of our own: the field selector reaches the server,
// only the node's pods count, and changes show in the next report.
func TestWatchesOneNodeOnly(t *testing.T) {
	s := podServer(t)
	log, stop := start(t, "--server", s.URL, "--node", "node-a", "--every", "10ms")
	waitSummary(t, log, `^pods node=node-a count=2 phases=map\[Pending:1 Running:1\] restarts=3`)
	_, err := s.Update(watchtest.Pods, pod("b", "node-a", "Running", 4))
	require.NoError(t, err)
	_, err = s.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	waitSummary(t, log, `pods node=node-a count=1 phases=map\[Running:1\] restarts=4`)
	require.NoError(t, stop())
	for _, req := range s.Requests() {
		if req.Verb == "list" || req.Verb == "watch" {
			assert.Equal(t, "spec.nodeName=node-a", req.Query.Get("fieldSelector"), "every list and watch is filtered by the server")
		}
	}
}

// Started again with the same snapshot directory, the agent starts warm:
// it reports the pods without listing them again.
func TestRestartsWarm(t *testing.T) {
	s := podServer(t)
	dir := t.TempDir()
	log, stop := start(t, "--server", s.URL, "--node", "node-a", "--every", "1h", "--snapshot-dir", dir)
	waitSummary(t, log, `count=2`)
	require.NoError(t, stop())
	lists := func() (n int) {
		for _, req := range s.Requests() {
			if req.Verb == "list" || req.Verb == "watch" && req.Query.Get("sendInitialEvents") == "true" {
				n++
			}
		}
		return n
	}
	before := lists()
	log, stop = start(t, "--server", s.URL, "--node", "node-a", "--every", "1h", "--snapshot-dir", dir)
	waitSummary(t, log, `count=2`)
	require.NoError(t, stop())
	assert.Equal(t, before, lists(), "no list after the warm start")
}

func TestNoNode(t *testing.T) {
	t.Setenv("NODE_NAME", "")
	a := newApp()
	err := a.Run(t.Context(), []string{"--server", "http://127.0.0.1:1", "--health-addr", ""}, setup)
	assert.ErrorContains(t, err, "no node: set --node or NODE_NAME")
}

func TestBadFlags(t *testing.T) {
	for args, want := range map[string]string{
		"node-1":         `unexpected argument "node-1"`,
		"--no-such-flag": "flag provided but not defined",
	} {
		a := newApp()
		a.Flags.SetOutput(io.Discard)
		assert.ErrorContains(t, a.Run(t.Context(), []string{args}, setup), want, args)
	}
}
