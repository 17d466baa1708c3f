package reconcile_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

// A Runner written as a literal, not by New, takes the defaults at Run: a
// zero ShutdownTimeout is 30 s, not "none". Its own Logger is kept, and
// hears the drain timeout at Error. Decision 30.
func TestRunnerLiteralTakesDefaults(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "stuck", "")
	rec := newRecorder()
	release := make(chan struct{})
	defer close(release)
	rec.answer = func(context.Context, string) (reconcile.Result, error) {
		<-release
		return reconcile.Result{}, nil
	}
	timers := &timerWatch{Fake: f.clk, made: make(chan time.Duration, 100)}
	log := &testlog.Log{}
	r := &reconcile.Runner{For: f.informer(watchtest.ConfigMaps), Reconcile: rec.reconcile, Clock: timers, Logger: slog.New(log)}
	x := start(t, r)
	rec.next(t)
	x.cancel()
	timers.await(t, reconcile.DefaultShutdownTimeout, "the default shutdown timeout")
	stepUntil(t, f.clk, 10*time.Second, x.returned, "Run returns at the shutdown timeout")
	err := x.wait(t)
	require.ErrorIs(t, err, reconcile.ErrDrainTimeout)
	assert.ErrorContains(t, err, "(30s)")
	above := log.Above()
	require.Len(t, above, 1, "%q", above)
	assert.True(t, strings.HasPrefix(above[0], "ERROR reconcile: shutdown timeout passed"), above[0])
}

// Run refuses a Runner without what it needs, at once.
func TestRunnerRefusesMissingFields(t *testing.T) {
	f := newFixture(t)
	inf := f.informer(watchtest.ConfigMaps)
	fn := newRecorder().reconcile
	keys := func(*listwatch.Object) []string { return nil }
	for name, r := range map[string]*reconcile.Runner{
		"For":           {Reconcile: fn},
		"Reconcile":     {For: inf},
		"Watch.Keys":    {For: inf, Reconcile: fn, Watches: []reconcile.Watch{{Informer: inf}}},
		"Watch.Inform":  {For: inf, Reconcile: fn, Watches: []reconcile.Watch{{Keys: keys}}},
		"Watches[1]...": {For: inf, Reconcile: fn, Watches: []reconcile.Watch{{Informer: inf, Keys: keys}, {}}},
	} {
		// Bounded: a Runner that wrongly starts runs until ctx ends.
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		err := r.Run(ctx)
		cancel()
		require.Error(t, err, name)
		require.NotErrorIs(t, err, context.DeadlineExceeded, name)
		assert.Contains(t, err.Error(), "reconcile: ", name)
	}
}

// Observe hears how long the reconcile took on the runner's clock.
func TestObserveTakesTheReconcilesTime(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	rec.answer = func(context.Context, string) (reconcile.Result, error) {
		f.clk.Step(3 * time.Second)
		return reconcile.Result{}, nil
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	took := make(chan time.Duration, 1)
	r.Observe = func(_ string, d time.Duration, _ reconcile.Outcome) { took <- d }
	start(t, r)
	select {
	case d := <-took:
		assert.Equal(t, 3*time.Second, d)
	case <-time.After(wait):
		t.Fatal("Observe not called")
	}
}

// Every Watch maps its informer's changes, not only the first. Decision 29.
func TestEachWatchRequeues(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "x", "")
	byLabel := func(o *listwatch.Object) []string {
		return []string{"ns/" + o.Get("metadata.labels.owner").String()}
	}
	rec := newRecorder()
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	r.Watches = []reconcile.Watch{
		{Informer: f.informer(watchtest.Pods), Keys: byLabel},
		{Informer: f.informer(watchtest.Deployments), Keys: byLabel},
	}
	start(t, r)
	assert.Equal(t, "ns/x", rec.next(t).key)
	require.Eventually(t, func() bool { return r.Ready() == nil }, wait, time.Millisecond)
	f.create(watchtest.Pods, "ns", "p", `,"labels":{"owner":"x"}`)
	assert.Equal(t, "ns/x", rec.next(t).key, "the first watch's")
	f.create(watchtest.Deployments, "ns", "d", `,"labels":{"owner":"x"}`)
	assert.Equal(t, "ns/x", rec.next(t).key, "the second watch's")
	rec.none(t)
}
