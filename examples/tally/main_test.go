package main

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// withKey returns the lines about key, in order.
func withKey(lines []string, key string) []string {
	var out []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && strings.TrimSuffix(f[1], ":") == key {
			out = append(out, l)
		}
	}
	return out
}

// On the demo server every pod labelled fail=true is retried --retries
// times with backoff and then dropped, after which a change starts the
// count afresh; the others are reconciled without a retry.
func TestDemoRetriesFailingPodsThenDrops(t *testing.T) {
	clitest.DemoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--workers", "3")
	var failing []string
	for _, i := range demoFailing {
		ns, name := demoKey(i)
		failing = append(failing, ns+"/"+name)
	}
	for _, key := range failing {
		r.Stdout.WaitFor(ctx, t, "the drop of "+key, clitest.Contains(`^dropped +`+regexp.QuoteMeta(key)+` after 5 retries`))
	}
	r.Stop()
	require.NoError(t, r.Wait(t))

	lines := r.Stdout.Lines()
	for _, key := range failing {
		got := withKey(lines, key)
		for i, l := range got {
			want := fmt.Sprintf("retry      %s (%d/5): pod is labelled fail=true", key, i%6+1)
			if i%6 == 5 {
				want = fmt.Sprintf("dropped    %s after 5 retries: pod is labelled fail=true", key)
			}
			require.Equal(t, want, l, "line %d about %s", i, key)
		}
	}
	healthy := withKey(lines, "shop/web-00")
	require.NotEmpty(t, healthy)
	assert.Regexp(t, `^reconciled shop/web-00: \w+ \(shop: `, healthy[0])
	for _, l := range lines {
		if strings.HasPrefix(l, "retry") || strings.HasPrefix(l, "dropped") {
			assert.Contains(t, failing, strings.Fields(l)[1], "only pods labelled fail=true fail")
		}
	}

	errs := r.Stderr.Lines()
	assert.Contains(t, errs, "synced 30 pods; starting 3 workers")
	assert.Contains(t, errs, "shutting down: workers finish the queued keys")
	summary := clitest.Contains(`^summary: \d+ reconciled, \d+ retried, \d+ dropped$`)
	assert.True(t, summary(errs), "summary line in %q", errs)
	for _, ns := range demo.Namespaces {
		assert.True(t, clitest.Contains(`^  `+ns+`: (\w+=\d+ ?)+$`)(errs), "tally of %s in %q", ns, errs)
	}
}

// Against a server of our own the lines are exact: a healthy pod is
// reconciled, its deletion reconciled as such, and a failing pod is
// retried --retries times and dropped.
func TestServerFlagReconcilesChangesAndDeletions(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s := watchtest.NewServer()
	defer s.Close()
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"},"status":{"phase":"Running"}}`)
	require.NoError(t, err)
	_, err = s.Create(watchtest.Pods, `{"metadata":{"name":"b","namespace":"ns","labels":{"fail":"true"}},"status":{"phase":"Running"}}`)
	require.NoError(t, err)

	r := clitest.Start(ctx, run, "--server", s.URL, "--retries", "2", "--workers", "1")
	r.Stdout.WaitFor(ctx, t, "ns/a reconciled", clitest.Contains(`^reconciled ns/a:`))
	_, err = s.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	r.Stdout.WaitFor(ctx, t, "ns/a deleted", clitest.Contains(`^reconciled ns/a: deleted`))
	r.Stdout.WaitFor(ctx, t, "ns/b dropped", clitest.Contains(`^dropped +ns/b`))
	r.Stop()
	require.NoError(t, r.Wait(t))

	lines := r.Stdout.Lines()
	assert.Equal(t, []string{
		"reconciled ns/a: Running (ns: Running=1)",
		"reconciled ns/a: deleted (ns: no pods)",
	}, withKey(lines, "ns/a"))
	assert.Equal(t, []string{
		"retry      ns/b (1/2): pod is labelled fail=true",
		"retry      ns/b (2/2): pod is labelled fail=true",
		"dropped    ns/b after 2 retries: pod is labelled fail=true",
	}, withKey(lines, "ns/b"))
	assert.Contains(t, r.Stderr.Lines(), "summary: 2 reconciled, 2 retried, 1 dropped")
}

// --duration ends the run by itself, with the summary.
func TestDurationEndsTheRun(t *testing.T) {
	clitest.DemoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--duration", "2s", "--workers", "1")
	require.NoError(t, r.Wait(t))
	require.NoError(t, ctx.Err(), "run returned on its own")
	assert.True(t, clitest.Contains(`^summary: `)(r.Stderr.Lines()))
	assert.True(t, clitest.Contains(`^reconciled `)(r.Stdout.Lines()))
}

func TestUnreachableServerIsOneClearError(t *testing.T) {
	url := apitest.Refused(t)

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := clitest.Start(ctx, run, "--server", url)
	err := r.Wait(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach the server at "+url)
}

func TestBadFlags(t *testing.T) {
	clitest.RejectsFlags(t, run, []clitest.BadArgs{
		{Args: []string{"--workers", "0"}, Want: "--workers must be at least 1"},
		{Args: []string{"--retries", "-1"}, Want: "--retries must not be negative"},
		{Args: []string{"pods"}, Want: `unexpected argument "pods"`},
		{Args: []string{"--resource", "secrets"}, Want: "--resource must be pods or configmaps"},
		{Args: []string{"--leader-elect", "--shards", "2"}, Want: "--leader-elect and --shards exclude each other"},
		{Args: []string{"--shards", "-1"}, Want: "--shards must not be negative"},
		{Args: []string{"--no-such-flag"}, Want: "flag provided but not defined"},
	})
}
