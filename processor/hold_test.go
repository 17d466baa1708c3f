package processor_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/parked"
	"github.com/listwatch/listwatch/processor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Notifications distributed under Hold are buffered at once but leave a
// waiting handler asleep until Release, which wakes it for all of them, in
// order (conformance 64's order is kept). Without Hold, or after Release,
// Distribute wakes the handler as before.
func TestHoldWakesHandlersOnceAtRelease(t *testing.T) {
	p := processor.New[int]()
	r := newRecorder()
	reg, err := p.AddHandler(r, 0, nil)
	require.NoError(t, err)
	run(t, p)
	waiting := func() bool { return parked.In("processor.(*listener[...]).run(", "sync.Cond.Wait") }
	require.Eventually(t, waiting, wait, time.Millisecond, "the handler's goroutine did not wait")

	p.Hold()
	p.Distribute(processor.Added(1, false))
	p.Distribute(processor.Updated(1, 2, false))
	p.Distribute(processor.Deleted(2, false))
	assert.Equal(t, 3, reg.Pending(), "held notifications are buffered at once")
	for range 10 {
		runtime.Gosched() // a handler woken by a held notification would run now
	}
	assert.True(t, waiting(), "a held notification woke the handler")
	assert.Empty(t, r, "a held notification woke the handler")

	p.Release()
	assert.Equal(t, []string{"add 1 false", "update 1 2", "delete 2 false"}, r.next(t, 3))
	p.Release() // a second Release does nothing
	p.Distribute(processor.Added(3, false))
	assert.Equal(t, []string{"add 3 false"}, r.next(t, 1), "without Hold Distribute wakes the handler")
}
