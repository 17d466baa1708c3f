package listwatch

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// decision 37, conformance 75: Wait on an informer whose Run was never
// called says so at once (ErrNotStarted) instead of waiting out its
// context; before the one wait, WaitForSyncFailFast waited for the
// deadline, then said "no sync error seen".
func TestWaitOnAnInformerNeverRunSaysSo(t *testing.T) {
	_, pods := watchtestPods(t)
	inf := NewInformer(pods, 0)
	inf.runGrace = 0 // the default second, without the wait
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := inf.Wait(ctx)
	require.ErrorIs(t, err, ErrNotStarted)
	assert.NoError(t, ctx.Err(), "said at once, not at the deadline")
	assert.Contains(t, err.Error(), "call Run")
}

// decision 37: Run started in a goroutine just before Wait is not taken
// for an informer never run: Wait gives it DefaultRunGrace to begin.
func TestWaitAllowsRunToBeginInAGoroutine(t *testing.T) {
	_, pods := watchtestPods(t)
	for range 20 {
		inf := NewInformer(pods, 0)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		require.NoError(t, inf.Wait(testwait.Context(t)))
		cancel()
		testwait.Recv(t, done, "Run to return")
	}
}

// decision 37: Wait on an informer whose Run returned before it synced
// says so at once (processor.ErrStopped).
func TestWaitOnAStoppedInformerSaysSo(t *testing.T) {
	inf, _ := loudInformer(t, deadURL(t), "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	inf.Run(ctx) // returns at once, never synced
	wctx, wcancel := context.WithTimeout(context.Background(), wait)
	defer wcancel()
	err := inf.Wait(wctx)
	require.ErrorIs(t, err, processor.ErrStopped)
	assert.NoError(t, wctx.Err(), "said at once, not at the deadline")
}

// decision 37, conformance 75: Factory.Wait with nothing started says so
// at once; before the one wait, Factory.WaitForSync returned nil, as if
// all were synced.
func TestFactoryWaitOnNothingStartedSaysSo(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()

	f := NewFactory(client)
	f.Start(ctx)
	require.ErrorIs(t, f.Wait(ctx), ErrNotStarted, "no informer at all")

	f = NewFactory(client)
	f.ForResource(podsRes)
	err = f.Wait(ctx)
	require.ErrorIs(t, err, ErrNotStarted, "made but never started")
	assert.Contains(t, err.Error(), "pods.v1")
	assert.NoError(t, ctx.Err(), "said at once, not at the deadline")

	f.Start(ctx)
	defer f.Shutdown()
	require.NoError(t, f.Wait(ctx))
}

// decision 37, decision 32: one rule for a warm start: Wait waits for the
// server to confirm the snapshot. A snapshot read from disk fills the
// cache, readable at once, but with the server down Wait does not return
// nil; without a snapshot a 403 is returned at once, as for any informer.
func TestWaitAfterAWarmStartWaitsForTheServer(t *testing.T) {
	t.Run("snapshot, server down", func(t *testing.T) {
		r := newWarmRig(t, "a", "b")
		r.coldRun(t)
		r.s.Close()
		inf, _ := r.informer()
		run(t, inf)
		testwait.Recv(t, inf.warm.loaded, "the snapshot restored")
		assert.Len(t, inf.Indexer().List(), 2, "readable before the server confirms")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err := inf.Wait(ctx)
		require.ErrorIs(t, err, context.Canceled, "not ready until the server confirms")
		assert.False(t, inf.HasSynced())
	})
	t.Run("snapshot, server up", func(t *testing.T) {
		r := newWarmRig(t, "a")
		r.coldRun(t)
		inf, _ := r.informer()
		run(t, inf)
		require.Eventually(t, func() bool { return inf.Stats().Watches == 1 }, wait, time.Millisecond)
		r.s.SendBookmarks() // the server confirms the snapshot's version
		require.NoError(t, inf.Wait(testwait.Context(t)))
		assert.True(t, inf.HasSynced())
	})
	t.Run("no snapshot, 403", func(t *testing.T) {
		forbidden := apitest.Serve(t, fixtures.Load(t, "forbidden.json").ServeHTTP)
		inf, _ := loudInformer(t, forbidden.URL, "")
		inf.Snapshot = snapshot.Options{Dir: t.TempDir()}
		runInBackground(t, inf)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		err := inf.Wait(ctx)
		require.Error(t, err)
		assert.NoError(t, ctx.Err(), "returned for the 403, not the deadline")
		assert.True(t, httpwatch.IsForbidden(err), "%v", err)
	})
}

// decision 37: Factory.Wait whose context ends before every informer
// synced returns an error, wrapping ctx.Err(), that names each informer
// not synced with the last error it met, and leaves out those synced.
func TestFactoryWaitAtItsDeadlineSaysWhy(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.FailNext(watchtest.Failure{Code: 500, Times: 1 << 30, Match: func(r watchtest.Request) bool {
		return strings.Contains(r.Path, "/configmaps")
	}})
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	c.RetryMax = 0 // each 500 is the informer's at once
	f := NewFactory(c)
	f.Logger = slog.New(&testlog.Log{})
	f.Configure = func(_ httpwatch.Resource, inf *Informer) {
		inf.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: time.Millisecond}
	}
	pods := f.ForResource(podsRes)
	cms := f.ForResource(cmsRes)
	ctx, cancel := context.WithCancel(context.Background())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx)
	require.NoError(t, pods.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { _, last := cms.syncErr.get(); return last != nil }, wait, time.Millisecond,
		"the configmaps' 500 noted")

	ended, end := context.WithCancel(ctx)
	end()
	err = f.Wait(ended)
	require.Error(t, err, "a configmaps informer never synced")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Contains(t, err.Error(), "configmaps.v1 not synced")
	assert.Contains(t, err.Error(), "500")
	assert.NotContains(t, err.Error(), "pods.v1", "pods synced")
	assert.False(t, httpwatch.IsPermanent(err), "%v", err)
}
