package reflector

import (
	"context"
	"github.com/listwatch/listwatch/clock"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// resourceScript is a scriptSource that says which resource it reads, as
// a *httpwatch.ResourceClient does.
type resourceScript struct {
	*scriptSource
	res httpwatch.Resource
}

func (s resourceScript) Info() httpwatch.SourceInfo {
	info := s.scriptSource.Info()
	info.Resource = s.res
	return info
}

// decision 20: a failure that carries no request of its own (a refused
// connection) is logged with the verb and path of the collection the
// source reads, when the source can say which.
func TestFailureLineNamesTheSourcesPath(t *testing.T) {
	src := resourceScript{&scriptSource{pages: []func(httpwatch.ListOptions) (*httpwatch.Page, error){fail(errConnRefused)}},
		httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns"}}
	r := New(src, &recordSink{})
	r.Name, r.PagedList, r.Backoff = "pods", true, Backoff{Initial: time.Hour}
	log := &testlog.Log{}
	r.Logger = slog.New(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.Eventually(t, func() bool { return len(log.Above()) == 1 }, 10*time.Second, time.Millisecond)
	line := log.Above()[0]
	assert.True(t, strings.HasPrefix(line, "WARN reflector: list failed resource=pods op=list verb=GET path=/api/v1/namespaces/ns/pods "), line)
}

// decision 20: after a logged failure, the first event of the watch that
// follows is the recovery, said once at Info; here the watch start was
// refused (retried without a list) and the next watch carries one event.
func TestRecoveryAtTheFirstEvent(t *testing.T) {
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchFail(errConnRefused), watchOf(newWatcher(ev(httpwatch.Added, obj("b", "11"))))},
	}
	sink := &recordSink{}
	r := New(src, sink)
	r.Name, r.PagedList, r.Backoff = "pods", true, Backoff{Initial: -1}
	log := &testlog.Log{}
	r.Logger = slog.New(log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return len(log.Above()) == 2 }, 10*time.Second, time.Millisecond, "%q", log.Above())
	lines := log.Above()
	assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: watch start failed"), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], "INFO reflector: recovered after 1 failure resource=pods"), lines[1])
}

// decision 38: the hint of a 403 names the request the program must be
// granted: the verb of the operation that failed (a watch-list is a
// list), and the resource and namespace of the request refused, or else
// of the collection the source reads.
func TestHintNamesTheRequestRefused(t *testing.T) {
	src := resourceScript{&scriptSource{}, httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns1"}}
	r := New(src, &recordSink{})
	r.Name = "pods"
	forbidden := &httpwatch.StatusError{Code: 403, Reason: "Forbidden"}
	elsewhere := &httpwatch.StatusError{Code: 403, Reason: "Forbidden", Verb: "GET", Path: "/api/v1/namespaces/other/configmaps"}
	for _, c := range []struct {
		op   Op
		err  error
		want string
	}{
		{OpList, forbidden, "grant list on pods in namespace ns1"},
		{OpWatchList, forbidden, "grant list on pods in namespace ns1"},
		{OpWatch, forbidden, "grant watch on pods in namespace ns1"},
		{OpList, elsewhere, "grant list on configmaps in namespace other"},
	} {
		assert.Contains(t, r.hint(&SyncError{Op: c.op, Err: c.err}), c.want, "%s: %v", c.op, c.err)
	}
	r.Source = &scriptSource{} // says nothing of its resource
	assert.Contains(t, r.hint(&SyncError{Op: OpList, Err: forbidden}), "grant list on pods at cluster scope")
}

// TestInitialState: where Run begins. A restored state with a version
// is unconfirmed until the server confirms it (decision 32); one without
// a version is not (nothing can confirm it: it lists); a resync period
// sets the first resync one period from the start.
func TestInitialState(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		name        string
		rv          string
		restore     bool
		resync      time.Duration
		restoring   bool
		unconfirmed bool
		resyncAt    time.Time
	}{
		{"a plain start", "", false, 0, false, false, time.Time{}},
		{"a version without a restore", "77", false, 0, false, false, time.Time{}},
		{"a restore at a version", "77", true, 0, true, true, time.Time{}},
		{"a restore without a version", "", true, 0, true, false, time.Time{}},
		{"a resync period", "", false, time.Minute, false, false, t0.Add(time.Minute)},
	} {
		r := New(&scriptSource{}, &recordSink{})
		r.Clock = clock.NewFake(t0)
		r.ResourceVersion, r.ResyncPeriod = c.rv, c.resync
		if c.restore {
			r.Restore = &Restore{}
		}
		s := r.initialState()
		assert.Equal(t, phaseStart, s.phase, c.name)
		assert.Equal(t, c.rv, s.lastRV, c.name)
		assert.Equal(t, c.restoring, s.restoring, c.name)
		assert.Equal(t, c.unconfirmed, s.unconfirmed, c.name)
		assert.Equal(t, c.resyncAt, s.resyncAt, c.name)
	}
}

// TestAlarmHoldsATimerOnlyForADeadline: the alarm makes its timer at the
// first deadline, moves it for a new one, and stops it when there is
// none, so that on a fake clock a pending timer always means the
// reflector waits for it.
func TestAlarmHoldsATimerOnlyForADeadline(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	a := newAlarm(clk)
	a.set(time.Time{})
	assert.Zero(t, clk.Waiters(), "no deadline, no timer")
	assert.Nil(t, a.c())
	a.set(clk.Now().Add(time.Minute))
	assert.Equal(t, 1, clk.Waiters())
	a.set(clk.Now().Add(2 * time.Minute))
	assert.Equal(t, 1, clk.Waiters(), "moved, not doubled")
	clk.Step(time.Minute)
	select {
	case <-a.c():
		t.Fatal("rang at the deadline it was moved from")
	default:
	}
	a.set(time.Time{})
	assert.Zero(t, clk.Waiters(), "stopped when the deadline went")
	a.set(clk.Now().Add(time.Second))
	clk.Step(time.Second)
	select {
	case <-a.c():
	default:
		t.Fatal("did not ring at its deadline")
	}
	a.stop()
}
