package store_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var key = store.MetaNamespaceKey[*pod]

func TestStoreWritesAndReads(t *testing.T) {
	s := store.New(key)
	require.NoError(t, s.Add(&pod{"a", "x", "n1"}))
	require.NoError(t, s.Update(&pod{"a", "x", "n2"}))
	require.NoError(t, s.Add(&pod{"", "y", "n1"}))
	got, ok, err := s.Get(&pod{ns: "a", name: "x"})
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, "n2", got.node, "the update replaced the object")
	keys := s.ListKeys()
	slices.Sort(keys)
	assert.Equal(t, []string{"a/x", "y"}, keys)
	assert.Len(t, s.List(), 2)

	require.NoError(t, s.Delete(&pod{ns: "a", name: "x"}))
	require.NoError(t, s.Delete(&pod{ns: "a", name: "x"}), "deleting an absent key does nothing")
	_, ok, _ = s.GetByKey("a/x")
	assert.False(t, ok)
	assert.Equal(t, 1, s.Len())

	require.ErrorIs(t, s.Add(&pod{ns: "a"}), store.ErrNoName)
	_, _, err = s.Get(&pod{ns: "a"})
	require.ErrorIs(t, err, store.ErrNoName)
	require.ErrorIs(t, store.New[*pod](nil).Add(&pod{name: "x"}), store.ErrNoKeyFunc)
}

// refusing is an Index that refuses objects on node "bad" and records
// what it was told.
type refusing struct{ log []string }

var errBad = errors.New("bad node")

func (r *refusing) Put(key string, obj, old *pod, replacing bool) error {
	if obj.node == "bad" {
		return errBad
	}
	r.log = append(r.log, fmt.Sprintf("put %s %s replacing=%v", key, obj.node, replacing))
	return nil
}

func (r *refusing) Remove(key string, old *pod) error {
	if old.node == "bad" {
		return errBad
	}
	r.log = append(r.log, "remove "+key)
	return nil
}

// TestStoreSwap: Swap is an upsert that returns what it replaced
// (conformance 50), as the informer applies a change, and one the Index
// refuses changes nothing.
func TestStoreSwap(t *testing.T) {
	idx := &refusing{}
	s := store.NewIndexed(key, idx)
	prev, loaded, err := s.Swap(&pod{"a", "x", "n1"})
	require.NoError(t, err)
	assert.False(t, loaded)
	assert.Nil(t, prev)
	prev, loaded, err = s.Swap(&pod{"a", "x", "n2"})
	require.NoError(t, err)
	require.True(t, loaded)
	assert.Equal(t, "n1", prev.node)

	prev, loaded, err = s.Swap(&pod{"a", "x", "bad"})
	require.ErrorIs(t, err, errBad)
	assert.ErrorContains(t, err, `store swap "a/x"`)
	assert.False(t, loaded)
	assert.Nil(t, prev)
	got, _, _ := s.GetByKey("a/x")
	assert.Equal(t, "n2", got.node, "a refused swap changes nothing")
	assert.Equal(t, []string{"put a/x n1 replacing=false", "put a/x n2 replacing=true"}, idx.log)

	_, _, err = s.Swap(&pod{ns: "a"})
	require.ErrorIs(t, err, store.ErrNoName)
}

// TestStoreIndexInStep: the Index hears every change before it is made,
// and one it refuses leaves the store as it was.
func TestStoreIndexInStep(t *testing.T) {
	idx := &refusing{}
	s := store.NewIndexed(key, idx)
	require.NoError(t, s.Add(&pod{"a", "x", "n1"}))
	require.NoError(t, s.Update(&pod{"a", "x", "n2"}))
	err := s.Update(&pod{"a", "x", "bad"})
	require.ErrorIs(t, err, errBad)
	assert.ErrorContains(t, err, `store update "a/x"`)
	got, _, _ := s.GetByKey("a/x")
	assert.Equal(t, "n2", got.node, "a refused write changes nothing")
	require.NoError(t, s.Delete(got))
	assert.Equal(t, []string{"put a/x n1 replacing=false", "put a/x n2 replacing=true", "remove a/x"}, idx.log)
	s.View(func(items map[string]*pod) { assert.Empty(t, items) })
}

// TestStoreConcurrent is for the race detector: writers and readers at once.
func TestStoreConcurrent(t *testing.T) {
	s := store.New(key)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := &pod{"ns", fmt.Sprint(i % 20), fmt.Sprint(w)}
				if i%3 == 2 {
					assert.NoError(t, s.Delete(p))
				} else {
					assert.NoError(t, s.Add(p))
				}
				s.List()
				s.GetByKey(store.JoinKey("ns", "1"))
			}
		}()
	}
	wg.Wait()
	assert.LessOrEqual(t, s.Len(), 20)
}
