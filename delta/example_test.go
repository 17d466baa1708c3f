package delta_test

import (
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/store"
)

type node struct{ name, status string }

func (n *node) Namespace() string { return "" }
func (n *node) Name() string      { return n.name }

// Example wires a FIFO to a cache the way an informer does: relist, watch
// events, then Pop until closed, applying each key's deltas.
func Example() {
	keyOf := store.MetaNamespaceKey[*node]
	cache := indexer.New(keyOf, nil)
	q := delta.NewFIFO(keyOf)
	q.KnownObjects = cache

	apply := func(d delta.Deltas[*node], isInInitialList bool) error {
		for _, x := range d {
			switch {
			case x.Tombstone != nil:
				fmt.Println("missed deletion of", x.Tombstone.Key)
				if cur, ok, _ := cache.GetByKey(x.Tombstone.Key); ok {
					_ = cache.Delete(cur)
				}
			case x.Type == delta.Deleted:
				fmt.Println("deleted", x.Object.name)
				_ = cache.Delete(x.Object)
			default:
				fmt.Println(x.Type, x.Object.name, x.Object.status, isInInitialList)
				_ = cache.Update(x.Object)
			}
		}
		return nil
	}

	_ = q.Replace([]*node{{"a", "Ready"}, {"b", "Ready"}}, "10")
	_ = q.Update(&node{"a", "NotReady"})
	for q.Len() > 0 {
		_, _ = q.Pop(apply)
	}
	fmt.Println("synced:", q.HasSynced())

	// The watch broke and b vanished meanwhile: the relist finds it gone.
	_ = q.Replace([]*node{{"a", "Ready"}}, "20")
	q.Close()
	for {
		if _, err := q.Pop(apply); errors.Is(err, delta.ErrClosed) {
			break
		}
	}
	fmt.Println("cached:", cache.ListKeys())
	// Output:
	// Replaced a Ready true
	// Updated a NotReady true
	// Replaced b Ready true
	// synced: true
	// Replaced a Ready false
	// missed deletion of b
	// cached: [a]
}
