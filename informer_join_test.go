package listwatch

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/testkit/parked"

	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/processor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// conformance 66: a handler that joins while a change is being applied
// waits until the change is in the cache and distributed, then receives the
// cache as initial adds: the change reaches it exactly once. An index
// function holds the apply half-way; the joining call must then be parked on
// the informer's lock, not inside the cache it would read too early.
func TestInformerHandlerJoiningMidApplyWaitsForIt(t *testing.T) {
	src := newMemSource()
	src.put("ns", "a", "web")
	inf, run := startInformer(t, src, 0)
	entered, release := make(chan struct{}), make(chan struct{})
	var once, released sync.Once
	defer released.Do(func() { close(release) }) // before Run's cleanup, should the test fail
	require.NoError(t, inf.AddIndexers(indexer.Indexers[*Object]{"gate": func(o *Object) ([]string, error) {
		if o.Name() == "x" {
			once.Do(func() { close(entered); <-release })
		}
		return nil, nil
	}}))
	early := newRecorder()
	regEarly, err := inf.AddEventHandler(early)
	require.NoError(t, err)
	run()
	require.Eventually(t, regEarly.HasSynced, wait, time.Millisecond)

	src.put("ns", "x", "web")
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the apply of x never reached the index function")
	}
	late := newRecorder()
	joined := make(chan *processor.Registration, 1)
	go func() {
		reg, err := inf.AddEventHandler(late)
		assert.NoError(t, err)
		joined <- reg
	}()
	require.Eventually(t, func() bool {
		return parked.In("listwatch.(*Informer).AddEventHandlerWithResync(", "sync.Mutex.Lock")
	}, wait, time.Millisecond, "a handler joining mid-apply must wait on the informer's lock")
	released.Do(func() { close(release) })
	var regLate *processor.Registration
	select {
	case regLate = <-joined:
	case <-time.After(wait):
		t.Fatal("AddEventHandler did not return after the apply finished")
	}
	require.Eventually(t, regLate.HasSynced, wait, time.Millisecond)

	src.put("ns", "marker", "web")
	for _, rec := range []*recorder{early, late} {
		require.Eventually(t, func() bool { return slices.Contains(rec.lines(), "add ns/marker initial=false") }, wait, time.Millisecond)
	}
	assert.Equal(t, []string{"add ns/a initial=true", "add ns/x initial=false", "add ns/marker initial=false"}, early.lines())
	assert.Equal(t, []string{"add ns/a initial=true", "add ns/x initial=true", "add ns/marker initial=false"}, sortedHead(late.lines(), 2))
}
