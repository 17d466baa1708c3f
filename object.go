package listwatch

import (
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/store"
)

// Object is the type every cache in this package holds.
type Object = raw.Object

// Key returns the key under which obj is cached and queued: "namespace/name",
// or "name" for cluster-scoped objects. store.SplitKey splits it back.
func Key(obj *Object) string { return store.JoinKey(obj.Namespace(), obj.Name()) }
