package processor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/testkit/parked"
)

// Post leaves a handler that waits for work asleep until Flush, and
// Flush then delivers what was posted, in order (conformance 64,
// decision 33).
func TestPostWaitsForFlush(t *testing.T) {
	p := processor.New[int]()
	rec := newRecorder()
	reg, err := p.AddHandler(rec, 0, nil)
	require.NoError(t, err)
	runStarted(t, p, rec)
	require.Eventually(t, func() bool {
		return parked.In("processor.(*listener[...]).run(", "sync.Cond.Wait")
	}, wait, time.Millisecond, "the handler's goroutine to wait for work")

	p.Post(processor.Added(1, false))
	p.Post(processor.Updated(1, 2, false))
	// Nothing can wake a goroutine parked on the condition but a signal,
	// and Post sends none: the two stay buffered.
	assert.Equal(t, 2, reg.Pending())
	assert.True(t, parked.In("processor.(*listener[...]).run(", "sync.Cond.Wait"))

	p.Flush()
	assert.Equal(t, []string{"add 1 false", "update 1 2"}, rec.next(t, 2))
	p.Flush() // nothing buffered: nothing to wake
	p.Distribute(marker)
	assert.Equal(t, []string{markerCall}, rec.next(t, 1), "Distribute wakes as before")
}

// A handler busy with earlier notifications takes posted ones in turn
// without a Flush: only a waiting handler needs waking (conformance 64).
func TestPostReachesABusyHandler(t *testing.T) {
	p := processor.New[int]()
	g := newGate()
	defer g.release()
	rec := newRecorder()
	_, err := p.AddHandler(processor.HandlerFuncs[int]{
		AddFunc: func(obj int, initial bool) {
			if obj == 1 {
				g.pass()
			}
			rec.OnAdd(obj, initial)
		},
	}, 0, nil)
	require.NoError(t, err)
	run(t, p)
	p.Distribute(processor.Added(1, false))
	g.waitEntered(t)
	p.Post(processor.Added(2, false))
	p.Post(processor.Added(3, false))
	g.release()
	assert.Equal(t, []string{"add 1 false", "add 2 false", "add 3 false"}, rec.next(t, 3))
}
