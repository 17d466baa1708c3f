package listwatch

import (
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

// widget is a user's own type, counting how often it is decoded.
type widget struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Size int `json:"size"`
	} `json:"spec"`
}

var widgetDecodes atomic.Int64

type countedWidget struct{ widget }

func (w *countedWidget) UnmarshalJSON(b []byte) error {
	widgetDecodes.Add(1)
	return json.Unmarshal(b, &w.widget)
}

func widgetObject(t testing.TB, name string, rv, size int) *Object {
	o, err := raw.NewObject(fmt.Appendf(nil,
		`{"kind":"Widget","metadata":{"name":%q,"namespace":"ns","resourceVersion":"%d","labels":{"app":"a"}},"spec":{"size":%d}}`, name, rv, size))
	require.NoError(t, err)
	return o
}

// typedRig is an informer whose cache the test fills by hand.
func typedRig(t *testing.T) (*Informer, *TypedLister[countedWidget]) {
	_, src := watchtestPods(t)
	inf := NewInformer(src, 0)
	return inf, Typed[countedWidget](inf)
}

// decision 42: a typed read decodes an object once per resourceVersion:
// a second read at the same version, by Get, List or Decode, does not
// decode again; a new version is decoded once more; a missing object is
// NotFound; a value that does not decode is its error.
func TestTypedReadsDecodeOncePerVersion(t *testing.T) {
	widgetDecodes.Store(0)
	inf, typed := typedRig(t)
	require.NoError(t, inf.indexer.Add(widgetObject(t, "w", 1, 3)))

	w, err := typed.Get("ns", "w")
	require.NoError(t, err)
	assert.Equal(t, 3, w.Spec.Size)
	assert.EqualValues(t, 1, widgetDecodes.Load())
	again, err := typed.Get("ns", "w")
	require.NoError(t, err)
	assert.Same(t, w, again, "the value decoded at that version")
	all, err := typed.List("app=a")
	require.NoError(t, err)
	require.Len(t, all, 1)
	assert.Same(t, w, all[0])
	o, _, _ := inf.indexer.GetByKey("ns/w")
	viaHandler, err := typed.Decode(o)
	require.NoError(t, err)
	assert.Same(t, w, viaHandler)
	assert.EqualValues(t, 1, widgetDecodes.Load(), "one decode for four reads at one version")

	_, _, err = inf.indexer.Swap(widgetObject(t, "w", 2, 5))
	require.NoError(t, err)
	w2, err := typed.Get("ns", "w")
	require.NoError(t, err)
	assert.Equal(t, 5, w2.Spec.Size)
	assert.Equal(t, 3, w.Spec.Size, "the old value is not changed")
	assert.EqualValues(t, 2, widgetDecodes.Load(), "a new version, decoded once more")

	_, err = typed.Get("ns", "none")
	assert.True(t, httpwatch.IsNotFound(err), "%v", err)

	bad, err := raw.NewObject([]byte(`{"metadata":{"name":"bad","namespace":"ns","resourceVersion":"1"},"spec":{"size":"big"}}`))
	require.NoError(t, err)
	require.NoError(t, inf.indexer.Add(bad))
	_, err = typed.Get("ns", "bad")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "decode ns/bad")
	_, err = typed.List("")
	assert.Error(t, err, "List says an object that does not decode")
}

// decision 42: many goroutines reading one object at once decode it once
// (run with -race).
func TestTypedReadsConcurrently(t *testing.T) {
	widgetDecodes.Store(0)
	inf, typed := typedRig(t)
	for i := range 10 {
		require.NoError(t, inf.indexer.Add(widgetObject(t, fmt.Sprintf("w%d", i), 1, i)))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := range 10 {
				w, err := typed.Get("ns", fmt.Sprintf("w%d", i))
				if assert.NoError(t, err) {
					assert.Equal(t, i, w.Spec.Size)
				}
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 10, widgetDecodes.Load(), "each object once")
}

// decision 42: the decoded values are bounded by the cache: objects
// created, read and deleted one after another leave at most about twice
// the cache's size behind.
func TestTypedReadsAreBoundedByTheCache(t *testing.T) {
	inf, typed := typedRig(t)
	for i := range 1000 {
		o := widgetObject(t, fmt.Sprintf("w%d", i), i+1, i)
		require.NoError(t, inf.indexer.Add(o))
		_, err := typed.Get("ns", o.Name())
		require.NoError(t, err)
		require.NoError(t, inf.indexer.Delete(o))
	}
	typed.mu.Lock()
	n := len(typed.decoded)
	typed.mu.Unlock()
	assert.LessOrEqual(t, n, 2*inf.indexer.Len()+minDecoded+1)
}

// decision 42: dropping the values of objects gone does not drop those
// the cache still holds at the version decoded: they are not decoded
// again, however many objects came and went meanwhile.
func TestTypedReadsKeepWhatTheCacheHolds(t *testing.T) {
	widgetDecodes.Store(0)
	inf, typed := typedRig(t)
	kept := make([]*countedWidget, 10)
	for i := range kept {
		require.NoError(t, inf.indexer.Add(widgetObject(t, fmt.Sprintf("kept%d", i), 1, i)))
		w, err := typed.Get("ns", fmt.Sprintf("kept%d", i))
		require.NoError(t, err)
		kept[i] = w
	}
	for i := range 200 { // enough to sweep several times
		o := widgetObject(t, fmt.Sprintf("gone%d", i), i+2, i)
		require.NoError(t, inf.indexer.Add(o))
		_, err := typed.Get("ns", o.Name())
		require.NoError(t, err)
		require.NoError(t, inf.indexer.Delete(o))
	}
	for i, w := range kept {
		again, err := typed.Get("ns", fmt.Sprintf("kept%d", i))
		require.NoError(t, err)
		assert.Same(t, w, again, "kept%d: the value decoded before the sweeps", i)
	}
	assert.EqualValues(t, 210, widgetDecodes.Load(), "each object decoded once")
}

// decision 42: the values of objects the cache no longer holds (a delete
// handler's, say) are kept until the values outnumber twice the cache's
// objects plus minDecoded: re-read before that, such an object is not
// decoded again; past it, they are dropped, and it is.
func TestTypedReadsKeepObjectsGoneUntilTheBound(t *testing.T) {
	widgetDecodes.Store(0)
	_, typed := typedRig(t) // its cache stays empty: every object read is gone
	gone := make([]*Object, minDecoded+1)
	first := make([]*countedWidget, len(gone))
	for i := range gone {
		gone[i] = widgetObject(t, fmt.Sprintf("gone%d", i), 1, i)
	}
	for i, o := range gone[:minDecoded] {
		w, err := typed.Decode(o)
		require.NoError(t, err)
		first[i] = w
	}
	for i, o := range gone[:minDecoded] {
		again, err := typed.Decode(o)
		require.NoError(t, err)
		require.Same(t, first[i], again, "gone%d: kept, %d values being within the bound", i, minDecoded)
	}
	require.EqualValues(t, minDecoded, widgetDecodes.Load())

	_, err := typed.Decode(gone[minDecoded]) // one more than the bound: a sweep
	require.NoError(t, err)
	again, err := typed.Decode(gone[0])
	require.NoError(t, err)
	assert.NotSame(t, first[0], again, "dropped by the sweep, decoded again")
	assert.Equal(t, first[0].Spec, again.Spec)
	assert.EqualValues(t, minDecoded+2, widgetDecodes.Load())
}
