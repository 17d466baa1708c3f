package ratelimit_test

import (
	"testing"
	"time"

	"github.com/listwatch/listwatch/testkit/parked"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// conformance 80
func TestAddDeduplicatesWaitingItems(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})
	for _, k := range []string{"a", "b", "a", "a", "c", "b"} {
		q.Add(k)
	}
	require.Equal(t, 3, q.Len())
	var got []string
	for q.Len() > 0 {
		k := getNow(t, q)
		got = append(got, k)
		q.Done(k)
	}
	require.Equal(t, []string{"a", "b", "c"}, got, "first-add order, each once")

	// Len counts waiting items only: not the one being processed.
	q.Add("a")
	q.Add("b")
	require.Equal(t, "a", getNow(t, q))
	require.Equal(t, 1, q.Len())
}

// conformance 81
func TestAddWhileProcessingRequeuesOnDone(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})
	q.Add("a")
	require.Equal(t, "a", getNow(t, q))

	q.Add("a")
	q.Add("a")
	require.Equal(t, 0, q.Len(), "an item being processed is marked dirty, not queued")

	// Had a been queued again, it would come before b.
	q.Add("b")
	require.Equal(t, "b", getNow(t, q), "a second worker gets what else is queued, not a")
	q.Done("b")

	// A worker parked waiting was handed nothing, a included.
	second := make(chan string)
	go func() {
		k, _ := q.Get()
		second <- k
	}()
	require.Eventually(t, func() bool { return parked.In("ratelimit.(*Queue[...]).Get(", "sync.Cond.Wait") }, 10*time.Second, time.Millisecond,
		"a second worker was not left waiting while a was being processed")

	q.Done("a")
	require.Equal(t, "a", testwait.Recv(t, second, "the parked worker to get a again on Done"), "dirty item queued again, once, on Done")
	require.Equal(t, 0, q.Len())
	q.Done("a")

	// Done without a preceding Get, or twice, changes nothing.
	q.Done("a")
	q.Done("never-added")
	require.Equal(t, 0, q.Len())
}

// conformance 82
func TestGetBlocksThenDrainsAfterShutDown(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})

	got := make(chan string)
	go func() {
		k, _ := q.Get()
		got <- k
	}()
	q.Add("x")
	require.Equal(t, "x", testwait.Recv(t, got, "a blocked Get to wake on Add"))
	q.Done("x")

	q.Add("a")
	q.Add("b")
	q.ShutDown()
	require.True(t, q.ShuttingDown())
	q.Add("c")
	q.AddAfter("d", 0)
	q.AddRateLimited("e")
	require.Equal(t, 2, q.Len(), "adds after ShutDown are dropped")

	for _, want := range []string{"a", "b"} {
		k, shutdown := q.Get()
		require.False(t, shutdown, "queued items are still handed out after ShutDown")
		require.Equal(t, want, k)
		q.Done(k)
	}
	k, shutdown := q.Get()
	require.True(t, shutdown)
	require.Zero(t, k)
}

// conformance 82
func TestShutDownWakesBlockedGets(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})
	const workers = 4
	done := make(chan bool, workers)
	for range workers {
		go func() {
			_, shutdown := q.Get()
			done <- shutdown
		}()
	}
	q.ShutDown()
	for range workers {
		require.True(t, testwait.Recv(t, done, "ShutDown to wake every blocked Get"))
	}
}

// conformance 83
func TestShutDownWithDrainWaitsForDone(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})
	q.Add("a")
	q.Add("b")
	a, b := getNow(t, q), getNow(t, q)

	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	// Either the drain has returned or it is parked waiting for Done: once
	// one of the two holds, whether it returned is settled.
	waitingOrDrained := func() bool {
		select {
		case <-drained:
			return true
		default:
			return parked.In("ratelimit.(*Queue[...]).ShutDownWithDrain(", "sync.Cond.Wait")
		}
	}
	require.Eventually(t, waitingOrDrained, 10*time.Second, time.Millisecond)
	require.True(t, q.ShuttingDown())
	q.Done(a)
	require.Eventually(t, waitingOrDrained, 10*time.Second, time.Millisecond)
	select {
	case <-drained:
		t.Fatal("drain returned with b still being processed")
	default:
	}
	q.Done(b)
	testwait.Recv(t, drained, "ShutDownWithDrain to return once the last item is done")
}

// conformance 83
func TestShutDownDoesNotWaitAndCancelsDrain(t *testing.T) {
	q, _ := fakeQueue(t, ratelimit.Config[string]{})
	q.Add("a")
	a := getNow(t, q)

	drained := make(chan struct{})
	go func() {
		q.ShutDownWithDrain()
		close(drained)
	}()
	// ShuttingDown reads true only once the drain has let go of the lock,
	// i.e. is waiting.
	require.Eventually(t, q.ShuttingDown, 10*time.Second, time.Millisecond)
	q.ShutDown() // returns at once though a is still processing
	testwait.Recv(t, drained, "ShutDown to end the drain's wait")
	q.Done(a)
}
