package store

import (
	"errors"
	"fmt"
	"strings"
)

// Named is what MetaNamespaceKey needs of an object. *raw.Object
// satisfies it.
type Named interface {
	Namespace() string
	Name() string
}

// KeyFunc computes the key an object is filed under. It must be pure: the
// same object always yields the same key.
type KeyFunc[T any] func(T) (string, error)

// ErrNoKeyFunc is returned by every write to a store or queue built with a
// nil KeyFunc.
var ErrNoKeyFunc = errors.New("no key function")

// ErrNoName is returned (wrapped) by MetaNamespaceKey for an object without a
// name: it cannot be told apart from any other nameless object.
var ErrNoName = errors.New("object has no name")

// MetaNamespaceKey returns "namespace/name", or just "name" when the
// namespace is empty (a cluster-scoped object).
func MetaNamespaceKey[T Named](obj T) (string, error) {
	name := obj.Name()
	if name == "" {
		return "", fmt.Errorf("meta namespace key: %w", ErrNoName)
	}
	return JoinKey(obj.Namespace(), name), nil
}

// JoinKey is the key of the object with this namespace and name:
// "namespace/name", or "name" when namespace is empty.
func JoinKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// SplitKey undoes MetaNamespaceKey: "ns/name" gives ("ns", "name"), "name"
// gives ("", "name"). A key with more than one slash is an error.
func SplitKey(key string) (namespace, name string, err error) {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		return "", key, nil
	}
	if strings.Contains(name, "/") {
		return "", "", fmt.Errorf("split key %q: want \"namespace/name\" or \"name\"", key)
	}
	return ns, name, nil
}
