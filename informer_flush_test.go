package listwatch

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/indexer"
)

// Handlers are woken once per batch the pop loop applies, yet a handler
// hears the first objects of a long list while the rest are being applied,
// not only after the last. An index function holds the apply of the last
// object; the handler must have heard at least the first flushEvery-1
// objects by then (decision 33). conformance 47 differs on purpose
// (decisions 2, 33): there is no PopBatch; keys are applied one at a time,
// and what is batched is waking the handlers.
func TestHandlersHearALongListWhileItIsApplied(t *testing.T) {
	src := newMemSource()
	const n = 2*flushEvery + 10
	for i := range n {
		src.put("ns", fmt.Sprintf("p%04d", i), "web")
	}
	inf, run := startInformer(t, src, 0)
	entered, release := make(chan struct{}), make(chan struct{})
	var released sync.Once
	defer released.Do(func() { close(release) }) // before Run's cleanup, should the test fail
	var indexed atomic.Int64
	require.NoError(t, inf.AddIndexers(indexer.Indexers[*Object]{"gate": func(*Object) ([]string, error) {
		if indexed.Add(1) == n { // the last object of the list to be applied
			close(entered)
			<-release
		}
		return nil, nil
	}}))
	var heard atomic.Int64
	reg, err := inf.AddEventHandler(HandlerFuncs{AddFunc: func(*Object, bool) { heard.Add(1) }})
	require.NoError(t, err)
	run()
	select {
	case <-entered:
	case <-time.After(wait):
		t.Fatal("the apply never reached the list's last object")
	}
	require.Eventually(t, func() bool { return heard.Load() >= flushEvery-1 }, wait, time.Millisecond,
		"the handler hears the list while it is applied")
	assert.False(t, inf.HasSynced(), "not synced before the last object is applied")
	released.Do(func() { close(release) })
	require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
	assert.EqualValues(t, n, heard.Load())
}
