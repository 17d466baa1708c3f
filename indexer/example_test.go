package indexer_test

import (
	"fmt"
	"slices"

	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/store"
)

type pet struct{ namespace, name, kind string }

func (p pet) Namespace() string { return p.namespace }
func (p pet) Name() string      { return p.name }
func (p pet) Label(key string) (string, bool) {
	if key == "kind" {
		return p.kind, true
	}
	return "", false
}

func Example() {
	pets := indexer.New(store.MetaNamespaceKey[pet], indexer.Indexers[pet]{
		indexer.Namespace: indexer.NamespaceIndex[pet],
		"kind":            indexer.LabelIndex[pet]("kind"),
	})
	_ = pets.Add(pet{"home", "rex", "dog"})
	_ = pets.Add(pet{"home", "tom", "cat"})
	_ = pets.Add(pet{"farm", "fido", "dog"})

	dogs, _ := pets.IndexKeys("kind", "dog")
	slices.Sort(dogs)
	fmt.Println(dogs)

	atHome, _ := pets.ByIndex(indexer.Namespace, "home")
	fmt.Println(len(atHome))

	_, err := pets.ByIndex("color", "brown")
	fmt.Println(err)
	// Output:
	// [farm/fido home/rex]
	// 2
	// unknown index: "color"
}
