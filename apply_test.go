package listwatch

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// TestApplyTakesEveryDeltaOfAKey: the queue hands over all of a key's
// changes at once; each reaches the cache and the handlers in order, a
// delete followed by an add included, and a delete whose last state is
// unknown hands out the state the cache held.
func TestApplyTakesEveryDeltaOfAKey(t *testing.T) {
	r := newWarmRig(t)
	inf := NewInformer(r.client.Resource(podsRes), 0)
	var heard []string
	done := make(chan struct{}, 8)
	label := func(o *Object) string { v, _ := o.Label("v"); return v }
	_, err := inf.AddEventHandler(HandlerFuncs{
		AddFunc: func(o *Object, _ bool) { heard = append(heard, "add "+label(o)); done <- struct{}{} },
		DeleteFunc: func(o *Object, unknown bool) {
			heard = append(heard, fmt.Sprint("delete ", label(o), " unknown=", unknown))
			done <- struct{}{}
		},
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); inf.processor.Run(ctx) }()
	t.Cleanup(func() { cancel(); testwait.RecvWithin(t, ran, testwait.Timeout, "the processor to stop") })

	object := func(js string) *Object {
		o, err := raw.NewObject([]byte(js))
		require.NoError(t, err)
		return o
	}
	v1, v2 := object(podJSON("a", "1")), object(podJSON("a", "2"))
	require.NoError(t, inf.apply(delta.Deltas[*Object]{{Type: delta.Added, Object: v1}}, false))
	require.NoError(t, inf.apply(delta.Deltas[*Object]{{Type: delta.Deleted, Object: v1}, {Type: delta.Added, Object: v2}}, false))
	inf.processor.Flush()
	cached, ok, _ := inf.indexer.GetByKey("ns/a")
	require.True(t, ok, "re-added after its delete")
	assert.Equal(t, "2", label(cached))
	// Gone while no one watched, its last state unknown: the cache's.
	require.NoError(t, inf.apply(delta.Deltas[*Object]{{Type: delta.Deleted, Tombstone: &delta.DeletedFinalStateUnknown[*Object]{Key: "ns/a"}}}, false))
	_, ok, _ = inf.indexer.GetByKey("ns/a")
	assert.False(t, ok)
	inf.processor.Flush()
	for range 4 {
		testwait.Recv(t, done, "a handler call")
	}
	assert.Equal(t, []string{"add 1", "delete 1 unknown=false", "add 2", "delete 2 unknown=true"}, heard)
}
