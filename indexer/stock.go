package indexer

import "github.com/listwatch/listwatch/store"

// Names for the stock indices. Any name works; these are the ones the rest
// of listwatch looks for.
const (
	Namespace = "namespace"
	Owner     = "owner"
)

// NamespaceIndex indexes an object by its namespace ("" for a
// cluster-scoped object).
func NamespaceIndex[T store.Named](obj T) ([]string, error) {
	return []string{obj.Namespace()}, nil
}

// Labeled objects expose their labels one key at a time.
type Labeled interface {
	Label(key string) (value string, ok bool)
}

// LabelIndex indexes objects by the value of label key; objects without
// the label are not in the index.
func LabelIndex[T Labeled](key string) IndexFunc[T] {
	return func(obj T) ([]string, error) {
		if v, ok := obj.Label(key); ok {
			return []string{v}, nil
		}
		return nil, nil
	}
}

// Owned objects expose the UIDs of their owners (metadata.ownerReferences).
type Owned interface {
	OwnerUIDs() []string
}

// OwnerIndex indexes an object under each of its owners' UIDs.
func OwnerIndex[T Owned](obj T) ([]string, error) {
	return obj.OwnerUIDs(), nil
}
