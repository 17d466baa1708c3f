package delta

import (
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/store"
)

// DeltaType says what happened to an object.
type DeltaType uint8

// The delta types. Replaced comes from a relist (Replace), Sync from a
// periodic Resync; consumers usually treat both as "this is the current
// state".
const (
	Added DeltaType = iota + 1
	Updated
	Deleted
	Replaced
	Sync
)

var typeNames = [...]string{Added: "Added", Updated: "Updated", Deleted: "Deleted", Replaced: "Replaced", Sync: "Sync"}

func (t DeltaType) String() string {
	if int(t) < len(typeNames) && typeNames[t] != "" {
		return typeNames[t]
	}
	return fmt.Sprintf("DeltaType(%d)", uint8(t))
}

// Delta is one change to one object.
//
// A Deleted delta is either a real deletion (Tombstone nil, Object is the
// object as deleted) or a tombstone: Replace found the key missing from a
// fresh list, so the deletion itself was never seen and the final state is
// unknown. A tombstone's Object is the last state known, which may be stale,
// or the zero T when nothing was known; Tombstone.Key names the object
// either way, so a consumer can always delete by key.
type Delta[T any] struct {
	Type      DeltaType
	Object    T
	Tombstone *DeletedFinalStateUnknown[T]
}

// DeletedFinalStateUnknown marks an object that disappeared while no one was
// watching. Obj is its last known state (equal to the Delta's Object).
type DeletedFinalStateUnknown[T any] struct {
	Key string
	Obj T
}

func tombstone[T any](key string, last T) Delta[T] {
	return Delta[T]{Type: Deleted, Object: last, Tombstone: &DeletedFinalStateUnknown[T]{Key: key, Obj: last}}
}

// Key returns the key of the object d is about: the tombstone's key, or
// key(d.Object).
func (d Delta[T]) Key(key store.KeyFunc[T]) (string, error) {
	if d.Tombstone != nil {
		return d.Tombstone.Key, nil
	}
	return key(d.Object)
}

// Deltas are the changes to one object, oldest first.
type Deltas[T any] []Delta[T]

// ErrNoDeltas is returned by Deltas.Key for an empty list.
var ErrNoDeltas = errors.New("no deltas")

// Oldest returns the first delta, or nil if there are none.
func (d Deltas[T]) Oldest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[0]
}

// Newest returns the last delta, or nil if there are none.
func (d Deltas[T]) Newest() *Delta[T] {
	if len(d) == 0 {
		return nil
	}
	return &d[len(d)-1]
}

// Key returns the key of the newest delta.
func (d Deltas[T]) Key(key store.KeyFunc[T]) (string, error) {
	if len(d) == 0 {
		return "", ErrNoDeltas
	}
	return d[len(d)-1].Key(key)
}

// appendDeduped appends next to ds, collapsing two Deleted deltas in a row
// into one: the real deletion wins over a tombstone, else the newer one.
// Nothing else is merged.
func appendDeduped[T any](ds Deltas[T], next Delta[T]) Deltas[T] {
	if n := len(ds); n > 0 && next.Type == Deleted && ds[n-1].Type == Deleted {
		if ds[n-1].Tombstone != nil {
			ds[n-1] = next
		}
		return ds
	}
	return append(ds, next)
}
