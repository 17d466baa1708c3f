package indexer

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/store"
)

type named struct{ ns, name string }

func (n *named) Namespace() string { return n.ns }
func (n *named) Name() string      { return n.name }

// TestOneValueKeepsNoSet pins what the uniform form saves (decision 46): an index under
// which every object has one value keeps no set of their keys (44 bytes
// an object for an informer of one namespace), builds the set once when a
// second value arrives, and forgets it when the cache empties.
func TestOneValueKeepsNoSet(t *testing.T) {
	c := New(store.MetaNamespaceKey[*named], Indexers[*named]{Namespace: NamespaceIndex[*named]})
	x := c.ix.byName[Namespace]
	for i := range 100 {
		require.NoError(t, c.Add(&named{"a", fmt.Sprint(i)}))
	}
	require.NoError(t, c.Update(&named{"a", "7"}))
	require.NoError(t, c.Delete(&named{"a", "8"}))
	assert.True(t, x.uniform)
	assert.Empty(t, x.sets, "one namespace: its keys are the store's")

	require.NoError(t, c.Add(&named{"b", "1"}))
	assert.False(t, x.uniform)
	assert.Equal(t, 99, x.sets["a"].len())
	assert.Equal(t, 1, x.sets["b"].len())

	for _, o := range c.List() {
		require.NoError(t, c.Delete(o))
	}
	require.NoError(t, c.Add(&named{"c", "1"}))
	assert.True(t, x.uniform, "an emptied cache starts uniform again")
	assert.Empty(t, x.sets)

	require.NoError(t, c.AddIndexers(Indexers[*named]{"late": NamespaceIndex[*named]}))
	assert.True(t, c.ix.byName["late"].uniform, "a late index over one value is uniform too")
	assert.Empty(t, c.ix.byName["late"].sets)
}

// TestByIndexAllocatesOnlyTheResult holds ByIndex to its doc in both
// forms (decision 46): the result is sized once.
func TestByIndexAllocatesOnlyTheResult(t *testing.T) {
	c := New(store.MetaNamespaceKey[*named], Indexers[*named]{Namespace: NamespaceIndex[*named]})
	for i := range 50 {
		require.NoError(t, c.Add(&named{"a", fmt.Sprint(i)}))
	}
	for _, form := range []string{"uniform", "explicit"} {
		if form == "explicit" {
			require.NoError(t, c.Add(&named{"b", "1"}))
		}
		allocs := testing.AllocsPerRun(20, func() {
			out, err := c.ByIndex(Namespace, "a")
			if err != nil || len(out) != 50 {
				t.Fatalf("ByIndex: %d objects, %v", len(out), err)
			}
		})
		assert.Equal(t, 1.0, allocs, form)
	}
}
