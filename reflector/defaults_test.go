package reflector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A Reflector built by hand, with no Clock, Logger or Random, runs on the
// defaults New would set, as an Informer or a Processor does: nil means the
// default everywhere. The watch's timeout draws a random number, its start
// reads the clock, and the dropped event of another kind is logged.
func TestReflectorNilMeansDefault(t *testing.T) {
	other, err := raw.NewObject(fmt.Appendf(nil, `{"kind":"ConfigMap","metadata":{"name":"x","namespace":"ns","resourceVersion":"11"}}`))
	require.NoError(t, err)
	w := newWatcher(ev(httpwatch.Added, other), ev(httpwatch.Added, obj("c", "12")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	sink := &recordSink{}
	r := &Reflector{Source: src, Sink: sink, ResyncPeriod: time.Hour}
	r.PagedList = true
	r.ExpectedKind = "Pod"
	ctx, cancel := context.WithCancel(context.Background())
	done := runCatching(ctx, r)
	require.Eventually(t, func() bool { return len(sink.log()) == 2 }, 10*time.Second, time.Millisecond)
	cancel()
	assert.Nil(t, waitFor(t, done, "Run to return"), "Run panicked")
	assert.Equal(t, []string{"replace 1@10", "add c@12"}, sink.log())
	assert.EqualValues(t, 1, r.Stats().Errors, "the event of another kind is reported")
	assert.Nil(t, r.Clock, "the defaults are not written into the configuration")
}

// The zero Options are the defaults (docs/conventions.md), so a literal
// names only what differs: a watch-list sync where the source serves one
// (conformance 31), client-go's backoff (800 ms doubling to 30 s, full
// jitter; a negative Initial never waits), watch timeouts from 5 minutes,
// DefaultWatchIdleTimeout (decision 36), and the source's resource as the
// name.
func TestZeroOptionsAreTheDefaults(t *testing.T) {
	src := &scriptSource{
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(newWatcher())},
	}
	r := &Reflector{Source: src, Sink: &recordSink{}, Random: func() float64 { return 0 }}
	assert.True(t, r.useWatchList(), "a watch-list sync")
	r.PagedList = true
	assert.False(t, r.useWatchList())

	var b Backoff
	now := time.Unix(1000, 0)
	assert.Equal(t, 800*time.Millisecond, b.Next(now, 0))
	assert.Equal(t, 1600*time.Millisecond, b.Next(now, 0))
	assert.Equal(t, 4800*time.Millisecond, b.Next(now, 0.5), "full jitter: 3.2 s and up to as much again")
	for range 10 {
		b.Next(now, 0)
	}
	assert.Equal(t, 30*time.Second, b.Next(now, 0), "capped")
	assert.Equal(t, 800*time.Millisecond, b.Next(now.Add(3*time.Minute), 0), "started over after 2 minutes")
	off := Backoff{Initial: -1}
	assert.Zero(t, off.Next(now, 0.5), "a negative Initial never waits")

	_, _ = r.step(context.Background(), at(phaseWatch, synced("10")))
	require.Len(t, src.watchOpts, 1)
	assert.EqualValues(t, 300, src.watchOpts[0].TimeoutSeconds)
	assert.Equal(t, DefaultWatchIdleTimeout, src.watchOpts[0].IdleTimeout)
	r.WatchIdleTimeout = -1
	assert.Negative(t, r.idleTimeout(), "no bound")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r.Run(ctx)
	assert.Equal(t, "objects", r.Name, "named after the source, which names no resource")
}
