package processor

import "fmt"

// Kind says which Handler method a Notification calls.
type Kind uint8

const (
	KindAdd    Kind = iota + 1 // OnAdd(New, IsInInitialList)
	KindUpdate                 // OnUpdate(Old, New)
	KindDelete                 // OnDelete(Old, FinalStateUnknown)
)

func (k Kind) String() string {
	switch k {
	case KindAdd:
		return "add"
	case KindUpdate:
		return "update"
	case KindDelete:
		return "delete"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Notification is one change the informer hands to every handler. Build it
// with Added, Updated or Deleted rather than by hand.
type Notification[T any] struct {
	Old T // update: the previous state; delete: the last known state
	New T // add and update: the new state

	Kind Kind

	// IsInInitialList marks an add that is part of the state the informer
	// listed before it synced, or of the cache replayed to a handler that
	// joined late. Registration.HasSynced waits for these.
	IsInInitialList bool

	// FinalStateUnknown marks a delete the informer did not watch happen:
	// the object was missing from a relist, so Old is the last state the
	// cache held, not the state at deletion.
	FinalStateUnknown bool

	// Resync marks an update whose object did not change (same
	// resourceVersion): it goes only to handlers whose resync is due.
	Resync bool
}

// Added returns the notification for a new object.
func Added[T any](obj T, isInInitialList bool) Notification[T] {
	return Notification[T]{Kind: KindAdd, New: obj, IsInInitialList: isInInitialList}
}

// Updated returns the notification for a changed object; resync says the
// object did not actually change (see Notification.Resync).
func Updated[T any](oldObj, newObj T, resync bool) Notification[T] {
	return Notification[T]{Kind: KindUpdate, Old: oldObj, New: newObj, Resync: resync}
}

// Deleted returns the notification for a removed object.
func Deleted[T any](obj T, finalStateUnknown bool) Notification[T] {
	return Notification[T]{Kind: KindDelete, Old: obj, FinalStateUnknown: finalStateUnknown}
}

// deliver calls the Handler method n stands for.
func (n *Notification[T]) deliver(h Handler[T]) {
	switch n.Kind {
	case KindAdd:
		h.OnAdd(n.New, n.IsInInitialList)
	case KindUpdate:
		h.OnUpdate(n.Old, n.New)
	default: // Distribute lets no other kind through
		h.OnDelete(n.Old, n.FinalStateUnknown)
	}
}
