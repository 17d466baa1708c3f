package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/watchtest"
)

// Every cached key is reconciled once the caches sync; a change is
// reconciled once more, and a notification of a version already
// reconciled (here the informer's own initial add, racing the runner's
// listing of the cache) is not: decision 29.
func TestReconcilesEachChangeOnce(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	f.create(watchtest.ConfigMaps, "ns", "b", "")
	rec := newRecorder()
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	start(t, r)
	got := []string{rec.next(t).key, rec.next(t).key}
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, got)

	f.update(watchtest.ConfigMaps, "ns", "a", `,"labels":{"v":"2"}`)
	assert.Equal(t, "ns/a", rec.next(t).key)
	_, err := f.s.Delete(watchtest.ConfigMaps, "ns", "b")
	require.NoError(t, err)
	assert.Equal(t, "ns/b", rec.next(t).key, "a deletion is reconciled")
	f.update(watchtest.ConfigMaps, "ns", "a", `,"labels":{"v":"3"}`)
	assert.Equal(t, "ns/a", rec.next(t).key)
	rec.none(t)
}

// RequeueAfter reconciles the key again once that much time has passed on
// the runner's clock, though its object did not change; a notification in
// between of the version reconciled does not bring it forward.
// Decision 29.
func TestRequeueAfter(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	var n atomic.Int32
	rec.answer = func(context.Context, string) (reconcile.Result, error) {
		if n.Add(1) == 1 {
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}
		return reconcile.Result{}, nil
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	obs := observe(r)
	start(t, r)
	assert.Equal(t, "ns/a", rec.next(t).key)
	obs.waitFor(t, 1)
	f.step(59 * time.Second)
	rec.none(t)
	f.step(time.Second)
	assert.Equal(t, "ns/a", rec.next(t).key, "requeued after a minute")
	obs.waitFor(t, 2)
	assert.Equal(t, []reconcile.Outcome{reconcile.RequeueAfter, reconcile.Success}, obs.get())
	f.step(time.Hour)
	rec.none(t)
}

// A failing key backs off on its own, doubling from the limiter's base,
// while another key is reconciled at once; a success forgets the failures.
// Decision 29.
func TestBackoffPerKey(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "bad", "")
	rec := newRecorder()
	var failing atomic.Bool
	failing.Store(true)
	rec.answer = func(_ context.Context, key string) (reconcile.Result, error) {
		if key == "ns/bad" && failing.Load() {
			return reconcile.Result{}, errors.New("refused")
		}
		return reconcile.Result{}, nil
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	obs := observe(r)
	start(t, r)
	assert.Equal(t, "ns/bad", rec.next(t).key)
	obs.waitFor(t, 1)
	ended := 1
	for _, delay := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		f.step(delay - time.Millisecond)
		rec.none(t)
		if delay == 2*time.Second {
			f.create(watchtest.ConfigMaps, "ns", "good", "")
			assert.Equal(t, "ns/good", rec.next(t).key, "another key does not wait for the failing one")
			ended++
			obs.waitFor(t, ended)
		}
		f.step(time.Millisecond)
		assert.Equal(t, "ns/bad", rec.next(t).key, "retried after %v", delay)
		ended++
		obs.waitFor(t, ended)
	}
	failing.Store(false)
	f.step(8 * time.Second)
	assert.Equal(t, "ns/bad", rec.next(t).key)
	ended++
	obs.waitFor(t, ended)
	f.step(time.Hour)
	rec.none(t)
	assert.Equal(t, reconcile.Success, obs.get()[ended-1])
}

// A RequeueAfter asked for while an earlier retry of the key still waits
// in the queue is kept: the retry, taken before the RequeueAfter's time,
// reconciles nothing, and the key comes back at that time. Decision 29.
func TestRequeueAfterSurvivesEarlierRetry(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	var n atomic.Int32
	rec.answer = func(_ context.Context, key string) (reconcile.Result, error) {
		if key != "ns/a" {
			return reconcile.Result{}, nil
		}
		switch n.Add(1) {
		case 1:
			return reconcile.Result{}, errors.New("refused") // retry after 1s
		case 2:
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}
		return reconcile.Result{}, nil
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	obs := observe(r)
	start(t, r)
	assert.Equal(t, "ns/a", rec.next(t).key)
	obs.waitFor(t, 1)
	f.update(watchtest.ConfigMaps, "ns", "a", `,"labels":{"v":"2"}`)
	assert.Equal(t, "ns/a", rec.next(t).key, "a new version is reconciled at once")
	obs.waitFor(t, 2)
	f.step(time.Second) // the retry's time
	// One worker: once b is reconciled, the retry of a queued before it
	// has been taken.
	f.create(watchtest.ConfigMaps, "ns", "b", "")
	assert.Equal(t, "ns/b", rec.next(t).key, "the retry of a reconciles nothing")
	obs.waitFor(t, 3)
	f.step(59*time.Second - time.Millisecond)
	rec.none(t)
	f.step(time.Millisecond)
	assert.Equal(t, "ns/a", rec.next(t).key, "requeued a minute after the second reconcile")
	obs.waitFor(t, 4)
	assert.Equal(t, []reconcile.Outcome{reconcile.Error, reconcile.RequeueAfter, reconcile.Success, reconcile.Success}, obs.get())
	f.step(time.Hour)
	rec.none(t)
}

// On shutdown the runner takes no new keys, lets the workers finish the
// queued ones, and, with a worker stuck past ShutdownTimeout, cancels its
// context and returns ErrDrainTimeout naming the key; the informers stop.
// Decision 30.
func TestDrainOnShutdownWithStuckWorker(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "stuck", "")
	rec := newRecorder()
	release := make(chan struct{})
	stuckIn := make(chan struct{})
	var stuckCtx atomic.Pointer[context.Context]
	hold := make(chan struct{})
	rec.answer = func(ctx context.Context, key string) (reconcile.Result, error) {
		if key == "ns/stuck" {
			stuckCtx.Store(&ctx)
			close(stuckIn)
			<-release // ignores ctx: stuck
			return reconcile.Result{}, nil
		}
		<-hold
		return reconcile.Result{}, nil
	}
	inf := f.informer(watchtest.ConfigMaps)
	r := f.runner(inf, rec)
	r.Workers = 2
	r.ShutdownTimeout = time.Minute
	timers := &timerWatch{Fake: f.clk, made: make(chan time.Duration, 100)}
	r.Clock = timers
	x := start(t, r)
	select {
	case <-stuckIn:
	case <-time.After(wait):
		t.Fatal("ns/stuck not reconciled")
	}
	for _, n := range []string{"q1", "q2", "q3"} {
		f.create(watchtest.ConfigMaps, "ns", n, "")
	}
	require.Eventually(t, func() bool { return len(rec.calls) == 2 && r.Len() == 2 }, wait, time.Millisecond,
		"one worker stuck, the other holding a key, two keys queued")
	x.cancel()
	close(hold) // the other worker drains the queue
	keys := map[string]bool{}
	for range 4 {
		keys[rec.next(t).key] = true
	}
	assert.Len(t, keys, 4, "every queued key drained after the shutdown began")
	assert.NoError(t, (*stuckCtx.Load()).Err(), "no cancellation before the timeout")
	// Run sees the cancel in its own time: a key created before it has
	// stopped intake is still taken, and drained.
	timers.await(t, r.ShutdownTimeout, "the shutdown to begin")
	f.create(watchtest.ConfigMaps, "ns", "late", "")
	stepUntil(t, f.clk, 10*time.Second, x.returned, "Run returns at the shutdown timeout")
	err := x.wait(t)
	require.ErrorIs(t, err, reconcile.ErrDrainTimeout)
	assert.ErrorContains(t, err, "busy with ns/stuck")
	assert.Error(t, (*stuckCtx.Load()).Err(), "the stuck worker's context is cancelled")
	assert.True(t, inf.IsStopped(), "informers stopped")
	close(release)
	rec.none(t)
}

// timerWatch is a fake clock that tells which timers are made: the runner
// arms its ShutdownTimeout once it has stopped taking keys, so a test that
// sees that timer made knows a key created now is refused.
type timerWatch struct {
	*clock.Fake
	made chan time.Duration
}

func (c *timerWatch) NewTimer(d time.Duration) clock.Timer {
	select {
	case c.made <- d:
	default: // nobody looks this far
	}
	return c.Fake.NewTimer(d)
}

// await returns once a timer of d has been made, failing after wait.
func (c *timerWatch) await(t *testing.T, d time.Duration, what string) {
	t.Helper()
	timeout := time.After(wait)
	for {
		select {
		case got := <-c.made:
			if got == d {
				return
			}
		case <-timeout:
			t.Fatalf("no timer of %v within %v: %s", d, wait, what)
		}
	}
}

// An owned object's change reconciles its controller, by ownerReferences
// with controller=true and the owner's group and kind; other references do
// not.
func TestOwnedObjectRequeuesOwner(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "x", "")
	owned := func(kind, apiVersion string, controller bool) string {
		ref := `{"apiVersion":"` + apiVersion + `","kind":"` + kind + `","name":"x","uid":"u"`
		if controller {
			ref += `,"controller":true`
		}
		return `,"ownerReferences":[` + ref + `}]`
	}
	rec := newRecorder()
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	r.Watches = []reconcile.Watch{{Informer: f.informer(watchtest.Pods), Keys: reconcile.ControllerOf("", "ConfigMap")}}
	start(t, r)
	assert.Equal(t, "ns/x", rec.next(t).key)
	require.Eventually(t, func() bool { return r.Ready() == nil }, wait, time.Millisecond)

	f.create(watchtest.Pods, "ns", "not-controller", owned("ConfigMap", "v1", false))
	f.create(watchtest.Pods, "ns", "other-kind", owned("Secret", "v1", true))
	f.create(watchtest.Pods, "ns", "other-group", owned("ConfigMap", "example.com/v1", true))
	f.create(watchtest.Pods, "ns", "y", owned("ConfigMap", "v1", true))
	assert.Equal(t, "ns/x", rec.next(t).key, "a new owned object")
	f.update(watchtest.Pods, "ns", "y", owned("ConfigMap", "v1", true)+`,"labels":{"v":"2"}`)
	assert.Equal(t, "ns/x", rec.next(t).key, "an owned object's change")
	_, err := f.s.Delete(watchtest.Pods, "ns", "y")
	require.NoError(t, err)
	assert.Equal(t, "ns/x", rec.next(t).key, "an owned object's deletion")
	rec.none(t)
}

// A panic in Reconcile is an error: recovered, retried after a backoff,
// observed as Error, and told from the other failures by IsPanic on the
// error OnError sees.
func TestPanicIsRetried(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	var n atomic.Int32
	rec.answer = func(context.Context, string) (reconcile.Result, error) {
		if n.Add(1) == 1 {
			panic("boom")
		}
		return reconcile.Result{}, nil
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	r.Logger = discard()
	obs := observe(r)
	errs := make(chan error, 10)
	r.OnError = func(_ string, err error) { errs <- err }
	start(t, r)
	rec.next(t)
	stepUntil(t, f.clk, 500*time.Millisecond, func() bool { return len(rec.calls) > 0 }, "retry")
	assert.Equal(t, "ns/a", rec.next(t).key)
	obs.waitFor(t, 2)
	assert.Equal(t, []reconcile.Outcome{reconcile.Error, reconcile.Success}, obs.get())
	require.Len(t, errs, 1, "the panic, once")
	err := <-errs
	assert.True(t, reconcile.IsPanic(err), "%v", err)
	assert.True(t, reconcile.IsPanic(fmt.Errorf("wrapped: %w", err)), "wrapped")
	assert.Contains(t, err.Error(), "boom")
	assert.False(t, reconcile.IsPanic(errors.New(err.Error())), "an error that only says panic")
	assert.False(t, reconcile.IsPanic(nil))
}

// Observe hears how each reconcile ended, with controller-runtime's
// results: RequeueAfter apart from Requeue (RequeueAfter wins when both
// are set, as it does for the key's next time), a panic as Error, which
// OnError alone tells from a returned error.
func TestObserveTellsEachOutcome(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer    func() (reconcile.Result, error)
		want      reconcile.Outcome
		label     string
		failed    bool // OnError sees it
		wantPanic bool // and IsPanic is true of its error
	}{
		{name: "success", answer: succeed, want: reconcile.Success, label: "success"},
		{name: "requeue", answer: requeue, want: reconcile.Requeue, label: "requeue"},
		{name: "requeueAfter", answer: func() (reconcile.Result, error) {
			return reconcile.Result{RequeueAfter: time.Minute}, nil
		}, want: reconcile.RequeueAfter, label: "requeue_after"},
		{name: "requeueAfter and requeue", answer: func() (reconcile.Result, error) {
			return reconcile.Result{Requeue: true, RequeueAfter: time.Minute}, nil
		}, want: reconcile.RequeueAfter, label: "requeue_after"},
		{name: "error", answer: fail, want: reconcile.Error, label: "error", failed: true},
		{name: "panic", answer: func() (reconcile.Result, error) { panic("boom") }, want: reconcile.Error, label: "error", failed: true, wantPanic: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.create(watchtest.ConfigMaps, "ns", "a", "")
			rec := newRecorder()
			rec.answer = scripted(tc.answer)
			r := f.runner(f.informer(watchtest.ConfigMaps), rec)
			r.Logger = discard()
			obs := observe(r)
			errs := make(chan error, 10)
			r.OnError = func(_ string, err error) { errs <- err }
			start(t, r)
			rec.next(t)
			obs.waitFor(t, 1)
			assert.Equal(t, []reconcile.Outcome{tc.want}, obs.get())
			assert.Equal(t, tc.label, string(tc.want), "controller-runtime's result label")
			if !tc.failed {
				assert.Empty(t, errs, "no failure")
				return
			}
			require.Len(t, errs, 1)
			assert.Equal(t, tc.wantPanic, reconcile.IsPanic(<-errs))
		})
	}
}

// /readyz answers 503 until the caches sync, then 200; /livez 200 while
// Run goes on, 503 once it failed.
// Decision 30.
func TestHealthEndpoints(t *testing.T) {
	f := newFixture(t)
	inf := f.informer(watchtest.ConfigMaps)
	r := f.runner(inf, newRecorder())
	srv := httptest.NewServer(r.Health())
	defer srv.Close()
	get := func(path string) (int, string) {
		resp, err := http.Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/readyz")
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Contains(t, body, "informers not synced")
	start(t, r)
	require.Eventually(t, func() bool { c, _ := get("/readyz"); return c == http.StatusOK }, wait, time.Millisecond)
	code, body = get("/livez")
	assert.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, "synced: true\nleading: true\n")

	// Run is taken once.
	assert.Error(t, r.Run(context.Background()))
}
