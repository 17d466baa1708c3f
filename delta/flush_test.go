package delta_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/testkit/parked"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// WakeOnFlush: writes leave a waiting Pop asleep until Flush, which then
// hands over the oldest key with all its deltas (conformance 39: Pop
// blocks while it has no work, here until the batch is flushed); Close
// still wakes it (decision 33).
func TestWakeOnFlush(t *testing.T) {
	f := delta.NewFIFO(key)
	f.WakeOnFlush = true
	f.Flush() // nothing queued: nothing to wake
	got := make(chan []step)
	go func() {
		ds, err := f.Pop(nil)
		assert.NoError(t, err)
		got <- steps(t, ds)
	}()
	waiting := func() bool { return parked.In("delta.(*FIFO[...]).Pop(", "sync.Cond.Wait") }
	require.Eventually(t, waiting, testwait.Timeout, time.Millisecond, "Pop did not wait on an empty queue")
	require.NoError(t, f.Add(o("a", "1")))
	require.NoError(t, f.Update(o("a", "2")))
	require.NoError(t, f.Add(o("b", "1")))
	// Only a signal wakes a goroutine parked on the condition, and the
	// writes sent none.
	assert.True(t, waiting(), "the writes woke Pop")
	assert.Equal(t, 2, f.Len())
	f.Flush()
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}, {delta.Updated, "ns/a", "2", false}},
		testwait.Recv(t, got, "Pop to wake on Flush"))
	ds, err := f.Pop(nil)
	require.NoError(t, err, "a queued key needs no Flush")
	assert.Equal(t, []step{{delta.Added, "ns/b", "1", false}}, steps(t, ds))

	errc := make(chan error)
	go func() {
		_, err := f.Pop(nil)
		errc <- err
	}()
	require.Eventually(t, waiting, testwait.Timeout, time.Millisecond, "Pop did not wait on an empty queue")
	f.Close()
	require.ErrorIs(t, testwait.Recv(t, errc, "a blocked Pop to wake on Close"), delta.ErrClosed)
}
