package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
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
	demoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--workers", "3")
	var failing []string
	for _, i := range demoFailing {
		ns, name := demoKey(i)
		failing = append(failing, ns+"/"+name)
	}
	for _, key := range failing {
		r.stdout.waitFor(ctx, t, "the drop of "+key, contains(`^dropped +`+regexp.QuoteMeta(key)+` after 5 retries`))
	}
	r.stop()
	require.NoError(t, r.wait(t))

	lines := r.stdout.Lines()
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

	errs := r.stderr.Lines()
	assert.Contains(t, errs, "synced 30 pods; starting 3 workers")
	assert.Contains(t, errs, "shutting down: workers finish the queued keys")
	summary := contains(`^summary: \d+ reconciled, \d+ retried, \d+ dropped$`)
	assert.True(t, summary(errs), "summary line in %q", errs)
	for _, ns := range demoNamespaces {
		assert.True(t, contains(`^  `+ns+`: (\w+=\d+ ?)+$`)(errs), "tally of %s in %q", ns, errs)
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

	r := start(ctx, "--server", s.URL, "--retries", "2", "--workers", "1")
	r.stdout.waitFor(ctx, t, "ns/a reconciled", contains(`^reconciled ns/a:`))
	_, err = s.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	r.stdout.waitFor(ctx, t, "ns/a deleted", contains(`^reconciled ns/a: deleted`))
	r.stdout.waitFor(ctx, t, "ns/b dropped", contains(`^dropped +ns/b`))
	r.stop()
	require.NoError(t, r.wait(t))

	lines := r.stdout.Lines()
	assert.Equal(t, []string{
		"reconciled ns/a: Running (ns: Running=1)",
		"reconciled ns/a: deleted (ns: no pods)",
	}, withKey(lines, "ns/a"))
	assert.Equal(t, []string{
		"retry      ns/b (1/2): pod is labelled fail=true",
		"retry      ns/b (2/2): pod is labelled fail=true",
		"dropped    ns/b after 2 retries: pod is labelled fail=true",
	}, withKey(lines, "ns/b"))
	assert.Contains(t, r.stderr.Lines(), "summary: 2 reconciled, 2 retried, 1 dropped")
}

// --duration ends the run by itself, with the summary.
func TestDurationEndsTheRun(t *testing.T) {
	demoEnv(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--duration", "2s", "--workers", "1")
	require.NoError(t, r.wait(t))
	require.NoError(t, ctx.Err(), "run returned on its own")
	assert.True(t, contains(`^summary: `)(r.stderr.Lines()))
	assert.True(t, contains(`^reconciled `)(r.stdout.Lines()))
}

func TestUnreachableServerIsOneClearError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	r := start(ctx, "--server", url)
	err = r.wait(t)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot reach the server at "+url)
}

func TestBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workers", "0"}, "--workers must be at least 1"},
		{[]string{"--retries", "-1"}, "--retries must not be negative"},
		{[]string{"pods"}, `unexpected argument "pods"`},
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
