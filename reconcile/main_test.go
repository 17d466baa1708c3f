package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every wait of these tests: a broken behaviour fails in
// seconds with its message.
const wait = 10 * time.Second

// fixture is a watchtest server, a client of it, and a fake clock for the
// runner (the informers keep the real one: they only list and watch).
type fixture struct {
	t      *testing.T
	s      *watchtest.Server
	client *httpwatch.Client
	clk    *clock.Fake
}

func newFixture(t *testing.T) *fixture {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Leases, watchtest.Definition{})
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	return &fixture{t: t, s: s, client: client, clk: clock.NewFake(time.Unix(0, 0))}
}

func (f *fixture) informer(r httpwatch.Resource) *listwatch.Informer {
	return listwatch.NewInformer(f.client.Resource(r), 0)
}

func (f *fixture) create(r httpwatch.Resource, ns, name, extra string) string {
	f.t.Helper()
	o, err := f.s.Create(r, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q%s}}`, name, ns, extra))
	require.NoError(f.t, err)
	return o.ResourceVersion()
}

func (f *fixture) update(r httpwatch.Resource, ns, name, extra string) string {
	f.t.Helper()
	o, err := f.s.Update(r, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q%s}}`, name, ns, extra))
	require.NoError(f.t, err)
	return o.ResourceVersion()
}

// runner returns a runner of rec over inf on the fixture's clock.
func (f *fixture) runner(inf *listwatch.Informer, rec *recorder) *reconcile.Runner {
	r := reconcile.New(inf, rec.reconcile)
	r.Clock = f.clk
	r.Limiter = &ratelimit.Exponential[string]{Base: time.Second, Max: time.Minute}
	return r
}

// running is a Run in progress.
type running struct {
	cancel   context.CancelFunc
	finished chan struct{}
	err      error
}

// start runs r until stop is called, at the latest when the test ends.
func start(t *testing.T, r *reconcile.Runner) *running {
	ctx, cancel := context.WithCancel(context.Background())
	x := &running{cancel: cancel, finished: make(chan struct{})}
	go func() { defer close(x.finished); x.err = r.Run(ctx) }()
	t.Cleanup(func() { x.stop(t) })
	return x
}

// stop cancels Run's context and returns its error.
func (x *running) stop(t *testing.T) error {
	x.cancel()
	return x.wait(t)
}

// wait returns Run's error once it returned, failing after wait.
func (x *running) wait(t *testing.T) error {
	select {
	case <-x.finished:
		return x.err
	case <-time.After(wait):
		t.Errorf("Run did not return within %v", wait)
		return nil
	}
}

// returned reports whether Run has returned.
func (x *running) returned() bool {
	select {
	case <-x.finished:
		return true
	default:
		return false
	}
}

// stepUntil steps the fake clock by d until cond holds, within wait.
func stepUntil(t *testing.T, clk *clock.Fake, d time.Duration, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, func() bool {
		if cond() {
			return true
		}
		clk.Step(d)
		return cond()
	}, wait, time.Millisecond, msg)
}

// call is one reconcile as the recorder saw it.
type call struct {
	key string
	ctx context.Context
}

// recorder is a Reconcile that reports each call on a channel and answers
// with what the test's answer function says (nil: success).
type recorder struct {
	calls  chan call
	answer func(ctx context.Context, key string) (reconcile.Result, error)
}

func newRecorder() *recorder { return &recorder{calls: make(chan call, 1000)} }

func (rec *recorder) reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	rec.calls <- call{key: key, ctx: ctx}
	if rec.answer != nil {
		return rec.answer(ctx, key)
	}
	return reconcile.Result{}, nil
}

// next returns the next reconciled key, failing after wait.
func (rec *recorder) next(t *testing.T) call {
	t.Helper()
	select {
	case c := <-rec.calls:
		return c
	case <-time.After(wait):
		t.Fatalf("no reconcile within %v", wait)
		return call{}
	}
}

// none checks that no reconcile is pending right now.
func (rec *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case c := <-rec.calls:
		t.Fatalf("unexpected reconcile of %s", c.key)
	default:
	}
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// observer records the outcomes Observe reports.
type observer struct {
	mu       sync.Mutex
	outcomes []reconcile.Outcome
}

func observe(r *reconcile.Runner) *observer {
	o := &observer{}
	r.Observe = func(_ string, _ time.Duration, out reconcile.Outcome) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.outcomes = append(o.outcomes, out)
	}
	return o
}

func (o *observer) get() []reconcile.Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]reconcile.Outcome(nil), o.outcomes...)
}

// waitFor returns once n reconciles have ended (and their keys were
// requeued or forgotten), so the test may step the clock.
func (o *observer) waitFor(t *testing.T, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return len(o.get()) >= n }, wait, time.Millisecond, "%d reconciles ended", n)
}

// step moves the fake clock by d and returns once the queue's goroutine
// waits on its timer again, so whatever became due has been queued.
func (f *fixture) step(d time.Duration) {
	f.t.Helper()
	f.clk.Step(d)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(f.t, f.clk.WaitForWaiters(ctx, 1))
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }

// replaceHolder returns the lease JSON with holderIdentity set to id.
func replaceHolder(t *testing.T, lease, id string) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lease), &m))
	m["spec"].(map[string]any)["holderIdentity"] = id
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return string(b)
}
