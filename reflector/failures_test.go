package reflector

import (
	"context"
	"errors"
	"fmt"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testwait"
)

func loggedReflector(src *scriptSource) (*Reflector, *testlog.Log, *clock.Fake) {
	r, _, c := newTestReflector(src)
	logs := &testlog.Log{}
	r.Logger = slog.New(logs)
	return r, logs, c
}

// decision 6, decision 20: every error reaches OnError; the first failure
// of a kind is logged once, at Warn, or at
// Error with what to do when retrying will not cure it; the line names the
// resource, verb, path and the server's message. Routine errors stay at
// Debug.
func TestReflectorLogsEachFailureAtItsLevel(t *testing.T) {
	forbidden := &httpwatch.StatusError{Code: 403, Reason: "Forbidden", Verb: "GET", Path: "/api/v1/pods",
		Message: `pods is forbidden: User "nobody" cannot list resource "pods" in API group "" at the cluster scope`}
	refused := fmt.Errorf("GET /api/v1/pods: %w", syscall.ECONNREFUSED)
	for _, tc := range []struct {
		name     string
		op       Op
		err      error
		field    string
		want     string // the one line above Debug; "" for none
		contains []string
	}{
		{"403 on list", OpList, forbidden, "", "ERROR reflector: list failed",
			[]string{"resource=pods", "verb=GET", "path=/api/v1/pods", "code=403", `User "nobody" cannot list`, "hint=check RBAC: grant list on pods at cluster scope"}},
		{"403 on watch", OpWatchStart, forbidden, "", "ERROR reflector: watch start failed",
			[]string{"hint=check RBAC: grant watch on pods at cluster scope"}},
		{"401", OpList, &httpwatch.StatusError{Code: 401, Reason: "Unauthorized", Message: "Unauthorized"}, "", "ERROR reflector: list failed",
			[]string{"code=401", "hint=check the credentials"}},
		{"404", OpList, &httpwatch.StatusError{Code: 404, Reason: "NotFound", Message: "the server could not find the requested resource"}, "", "ERROR reflector: list failed",
			[]string{"hint=check the resource name"}},
		{"unsupported field label", OpList, &httpwatch.StatusError{Code: 400, Reason: "BadRequest", Message: `field label not supported: spec.nodeNam`}, "spec.nodeNam=n1",
			"ERROR reflector: list failed", []string{"message=field label not supported: spec.nodeNam", `hint=check the field selector "spec.nodeNam=n1"`}},
		{"exec plugin missing (decision 38)", OpList, fmt.Errorf("GET /api/v1/pods: get credentials: %w", &missingPlugin{}), "", "ERROR reflector: list failed",
			[]string{"hint=install the exec credential plugin, or fix its path"}},
		{"unknown resource", OpList, fmt.Errorf("resource %q: %w", "pod", discovery.ErrUnknownResource), "", "ERROR reflector: list failed",
			[]string{"the server has no such resource", "hint=check the resource name"}},
		{"unknown resource explained by discovery", OpList, fmt.Errorf(`GET /api/v1/configmap: the core API v1 serves no resource "configmap" (did you mean configmaps?): %w: %w`,
			discovery.ErrUnknownResource, &httpwatch.StatusError{Code: 404, Reason: "NotFound", Verb: "GET", Path: "/api/v1/configmap", Message: "the server could not find the requested resource"}),
			"", "ERROR reflector: list failed", []string{"code=404", "did you mean configmaps?", "hint=check the resource name"}},
		{"connection refused", OpWatchList, refused, "", "WARN reflector: watch-list failed",
			[]string{"err=GET /api/v1/pods: connection refused", "hint=check the server address"}},
		{"500", OpWatch, errInternal, "", "WARN reflector: watch failed", []string{"code=500"}},
		{"410 relist", OpWatch, errGone, "", "", nil},
		{"expired list", OpList, errExpired, "", "", nil},
		{"cut watch", OpWatch, fmt.Errorf("read: %w", syscall.ECONNRESET), "", "", nil},
		{"decision 36: silent watch", OpWatch, fmt.Errorf("WATCH /api/v1/pods: %w: nothing from the server for 2m0s", httpwatch.ErrWatchIdle), "",
			"WARN reflector: watch failed", []string{"nothing from the server for 2m0s", "hint=the watch resumed on a new connection"}},
		{"no end bookmark", OpWatchList, ErrNoInitialEventsEnd, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, logs, _ := loggedReflector(&scriptSource{})
			r.FieldSelector = tc.field
			var got []error
			r.OnError = func(err error) { got = append(got, err) }
			r.report(tc.op, tc.err)
			require.Len(t, got, 1, "OnError sees every error")
			lines := logs.Above()
			if tc.want == "" {
				assert.Empty(t, lines)
				assert.True(t, got[0].(*SyncError).Routine)
				return
			}
			require.Len(t, lines, 1)
			assert.True(t, strings.HasPrefix(lines[0], tc.want+" "), lines[0])
			for _, c := range tc.contains {
				assert.Contains(t, lines[0], c)
			}
			assert.False(t, got[0].(*SyncError).Routine)
		})
	}
}

// decision 20: a failure repeated on every retry is one line, then one
// summary with its count per repeatSummaryEvery, then one Info line when
// the reflector recovers; a watch-list the server refuses, replaced by a
// paged list, is routine.
func TestReflectorSummarisesRepeatedFailures(t *testing.T) {
	forbidden := &httpwatch.StatusError{Code: 403, Reason: "Forbidden", Verb: "GET", Path: "/api/v1/pods", Message: "pods is forbidden"}
	r, logs, c := loggedReflector(&scriptSource{})
	for range 37 { // 37 retries, 30 s apart: 18.5 minutes
		r.report(OpList, forbidden)
		c.Step(30 * time.Second)
	}
	lines := logs.Above()
	require.Len(t, lines, 4, "%q", lines)
	assert.True(t, strings.HasPrefix(lines[0], "ERROR reflector: list failed "))
	for _, l := range lines[1:] {
		assert.Contains(t, l, "ERROR reflector: list failed 10 more times since ")
		assert.Contains(t, l, "message=pods is forbidden")
		assert.Contains(t, l, "repeats=10 since=")
	}

	logs.Reset()
	r.recovered()
	r.recovered()
	lines = logs.Above()
	require.Len(t, lines, 1, "one line per recovery: %q", lines)
	assert.Contains(t, lines[0], "INFO reflector: recovered after 37 failures resource=pods failures=37 last_error=")

	logs.Reset()
	r.reportRoutine(OpWatchList, errBad)
	c.Step(time.Hour)
	r.report(OpList, forbidden)
	lines = logs.Above()
	require.Len(t, lines, 1, "%q", lines)
	assert.True(t, strings.HasPrefix(lines[0], "ERROR reflector: list failed "), "a failure long after recovery is news again: %s", lines[0])
}

// decision 20: a failure that comes back soon after each recovery (a watch
// failing every few seconds) adds no line until repeatSummaryEvery has
// passed since its last one.
func TestReflectorFlappingFailureDoesNotFlood(t *testing.T) {
	r, logs, c := loggedReflector(&scriptSource{})
	for range 120 {
		r.report(OpWatch, errInternal)
		c.Step(time.Second)
		r.recovered()
		c.Step(2 * time.Second)
	}
	lines := logs.Above() // 360 s: the first failure, its recovery, one summary and its recovery
	require.Len(t, lines, 4, "%q", lines)
	assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: watch failed "), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "INFO reflector: recovered "), lines[1])
	assert.Contains(t, lines[2], "WARN reflector: watch failed 100 more times since")
	assert.True(t, strings.HasPrefix(lines[3], "INFO reflector: recovered "), lines[3])
}

// decision 20: a watch-list is a way of listing and a watch start a way of
// watching, so a failure of one right after the same failure of the other
// is no news; a list's failure and a watch's are two failures, each said.
func TestReflectorListingAndWatchingFailApart(t *testing.T) {
	for _, tc := range []struct {
		first, then Op
		news        bool
	}{
		{OpList, OpWatchList, false},
		{OpWatchList, OpList, false},
		{OpWatchStart, OpWatch, false},
		{OpWatch, OpWatchStart, false},
		{OpList, OpWatch, true},
		{OpWatchList, OpWatchStart, true},
		{OpWatch, OpList, true},
		{OpWatchStart, OpWatchList, true},
	} {
		t.Run(tc.first.String()+" then "+tc.then.String(), func(t *testing.T) {
			r, logs, c := loggedReflector(&scriptSource{})
			r.report(tc.first, errInternal)
			c.Step(time.Second)
			r.recovered()
			c.Step(time.Second)
			logs.Reset()
			r.report(tc.then, errInternal)
			lines := logs.Above()
			if !tc.news {
				assert.Empty(t, lines, "the same failure flapping within the summary period")
				return
			}
			require.Len(t, lines, 1, "%q", lines)
			assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: "+tc.then.String()+" failed "), lines[0])
		})
	}
}

// decision 20: over a dead URL Run logs the failure once, however many
// times it retries, and the error reaches OnError every time.
func TestReflectorRunDeadURLLogsOnce(t *testing.T) {
	refused := fmt.Errorf("GET /api/v1/pods: %w", syscall.ECONNREFUSED)
	src := &scriptSource{}
	for range 20 {
		src.pages = append(src.pages, fail(refused))
	}
	r, logs, c := loggedReflector(src)
	errs := make(chan error, 100)
	r.OnError = func(err error) { errs <- err }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	for i := range 20 {
		select {
		case err := <-errs:
			assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "%v", err)
		case <-time.After(10 * time.Second):
			t.Fatalf("no error %d", i)
		}
		require.NoError(t, c.WaitForWaiters(testwait.Context(t), 1), "the reflector to wait for its retry")
		c.Step(time.Minute)
	}
	cancel()
	testwait.Recv(t, done, "Run to return after cancel")
	lines := logs.Above()
	require.NotEmpty(t, lines)
	assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: list failed "), lines[0])
	assert.Contains(t, lines[0], "connection refused")
	assert.LessOrEqual(t, len(lines), 5, "20 minutes of retries: at most one line per 5 minutes: %q", lines)
}

// countingClock is a Clock that counts the timers made.
type countingClock struct {
	*clock.Fake
	mu     sync.Mutex
	timers []time.Duration
}

func (c *countingClock) NewTimer(d time.Duration) clock.Timer {
	c.mu.Lock()
	c.timers = append(c.timers, d)
	c.mu.Unlock()
	return c.Fake.NewTimer(d)
}

func (c *countingClock) made() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.timers...)
}

// Run makes no timer it does not wait on, so a test that sees a
// pending timer on a fake clock knows the reflector is waiting: a Run
// without a resync period syncs and watches with no timer at all.
func TestReflectorRunMakesNoIdleTimer(t *testing.T) {
	w := newWatcher(ev(httpwatch.Added, obj("a", "2")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("1", "")},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	r, sink, fake := newTestReflector(src)
	c := &countingClock{Fake: fake}
	r.Clock = c
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	assert.Empty(t, c.made(), "no timer while nothing is due")
	assert.Zero(t, c.Waiters())
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
}

// missingPlugin is kubeconfig's error for an exec plugin that is not
// installed, as it wraps kubeconfig.ErrExecPluginMissing.
type missingPlugin struct{}

func (*missingPlugin) Error() string { return "exec plugin /nonexistent/plugin is not installed" }
func (*missingPlugin) Unwrap() error { return kubeconfig.ErrExecPluginMissing }

// decision 38, decision 20: the network's ways of failing are one outage
// in the log: said once at Warn, as what failed first, the rest counted,
// and the recovery counts them all. However the outage shows first (a
// refused watch start, the HTTP/2 ping closing the connection under an
// open watch, an HTTP/1.1 watch found silent), the reflector's is the one
// line: the client says nothing above Debug.
func TestReflectorSaysAnOutageOnce(t *testing.T) {
	type failure struct {
		op  Op
		err error
	}
	then := []failure{{OpWatchStart, errTLSHandshake}, {OpWatchStart, errDNS}, {OpWatchStart, errConnRefused},
		{OpWatchStart, errNoResponse}, {OpWatchStart, errUnreachable}, {OpWatchStart, errTLSHandshake}}
	for _, tc := range []struct {
		name  string
		first failure
		want  string
	}{
		{"a watch start that times out", failure{OpWatchStart, errTLSHandshake}, "WARN reflector: watch start failed"},
		{"HTTP/2: the ping closes the open watch's connection", failure{OpWatch, errLost}, "WARN reflector: watch failed"},
		{"HTTP/1.1: the open watch is found silent", failure{OpWatch, fmt.Errorf("read: %w", httpwatch.ErrWatchIdle)}, "WARN reflector: watch failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, logs, _ := loggedReflector(&scriptSource{})
			for _, f := range append([]failure{tc.first}, then...) {
				r.report(f.op, f.err)
			}
			r.recovered()
			above := logs.Above()
			require.Len(t, above, 2, "%q", above)
			assert.Contains(t, above[0], tc.want)
			assert.Contains(t, above[0], tc.first.err.Error())
			assert.Contains(t, above[1], "INFO reflector: recovered after 7 failures")
		})
	}
}
