package listwatch

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformance 25, 62: Run wires the informer's resync period and its
// handlers' ShouldResync into the reflector. One period later on the
// reflector's clock, a handler with that period hears every cached object
// again, as an update to itself; a handler without resync hears nothing.
func TestInformerResyncReachesDueHandlersOnly(t *testing.T) {
	const period = time.Minute
	src := newMemSource()
	src.put("ns", "a", "web")
	src.put("ns", "b", "web")
	fake := clock.NewFake(time.Unix(0, 0))
	inf, run := startInformer(t, src, period)
	inf.Clock = fake
	periodic, quiet := newRecorder(), newRecorder()
	regP, err := inf.AddEventHandler(periodic)
	require.NoError(t, err)
	regQ, err := inf.AddEventHandlerWithResync(quiet, 0)
	require.NoError(t, err)
	run()
	require.Eventually(t, func() bool { return regP.HasSynced() && regQ.HasSynced() }, wait, time.Millisecond)

	// With no backoff, the resync timer is the only timer on the clock.
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, fake.WaitForWaiters(ctx, 1), "no resync timer armed")
	fake.Step(period)
	require.Eventually(t, func() bool { return len(periodic.lines()) == 4 }, wait, time.Millisecond)

	// Everything distributed before the marker reaches a handler before it.
	src.put("ns", "marker", "web")
	require.Eventually(t, func() bool { return len(periodic.lines()) == 5 && len(quiet.lines()) == 3 }, wait, time.Millisecond)
	resynced := periodic.lines()[2:4]
	slices.Sort(resynced)
	assert.Equal(t, []string{"update ns/a 1->1", "update ns/b 2->2"}, resynced)
	assert.Equal(t, "add ns/marker initial=false", periodic.lines()[4])
	assert.Equal(t, []string{"add ns/a initial=true", "add ns/b initial=true", "add ns/marker initial=false"}, sortedHead(quiet.lines(), 2))
}

// sortedHead sorts the first n lines, whose order a list does not fix, and
// keeps the rest in order.
func sortedHead(lines []string, n int) []string {
	slices.Sort(lines[:n])
	return lines
}
