package delta_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/internal/parked"
	"github.com/listwatch/listwatch/internal/testwait"
)

// Writes under Hold are queued at once, yet leave a waiting Pop asleep
// until Release, which wakes it for all of them; keys still come out in
// the order they entered, one per Pop.
func TestHoldWakesPopOnceAtRelease(t *testing.T) {
	f := delta.NewFIFO(key)
	got := make(chan []step, 3)
	go func() {
		for range 3 {
			ds, err := f.Pop(nil)
			assert.NoError(t, err)
			got <- steps(t, ds)
		}
	}()
	waiting := func() bool { return parked.In("delta.(*FIFO[...]).Pop(", "sync.Cond.Wait") }
	require.Eventually(t, waiting, testwait.Timeout, time.Millisecond, "Pop did not wait on an empty queue")

	f.Hold()
	require.NoError(t, f.Add(o("a", "1")))
	require.NoError(t, f.Update(o("b", "2")))
	require.NoError(t, f.Update(o("a", "3")))
	assert.Equal(t, []string{"ns/a", "ns/b"}, f.ListKeys(), "held writes are queued at once")
	for range 10 {
		runtime.Gosched() // a Pop woken by a held write would run now
	}
	assert.True(t, waiting(), "a held write woke Pop")
	assert.Empty(t, got, "a held write woke Pop")

	f.Release()
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}, {delta.Updated, "ns/a", "3", false}},
		testwait.Recv(t, got, "Release to wake Pop"))
	assert.Equal(t, []step{{delta.Updated, "ns/b", "2", false}}, testwait.Recv(t, got, "the second key"))

	// A Release with nothing written, and writes with no Hold, wake as before.
	f.Hold()
	f.Release()
	require.NoError(t, f.Add(o("c", "4")))
	assert.Equal(t, []step{{delta.Added, "ns/c", "4", false}}, testwait.Recv(t, got, "an unheld write to wake Pop"))
}

// A Pop that finds keys queued under Hold takes them without waiting.
func TestHoldDoesNotHideKeysFromPop(t *testing.T) {
	f := delta.NewFIFO(key)
	f.Hold()
	defer f.Release()
	require.NoError(t, f.Add(o("a", "1")))
	assert.Equal(t, []step{{delta.Added, "ns/a", "1", false}}, pop(t, f))
}
