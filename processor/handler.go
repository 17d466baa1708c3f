package processor

// Handler receives an informer's notifications for one kind of object.
//
// The methods of one Handler are called from a single goroutine, one at a
// time, in the order the informer produced the notifications; different
// handlers run concurrently. A handler may be slow: its notifications wait
// in its own buffer and never hold up the informer or other handlers. It
// must not modify the objects it receives; they are shared with the cache
// and with every other handler.
type Handler[T any] interface {
	// OnAdd is called for an object new to the cache. isInInitialList is
	// true when the object was part of the initial list, or of the cache
	// replayed to a handler added after the informer started.
	OnAdd(obj T, isInInitialList bool)

	// OnUpdate is called when an object changed, and on a resync with
	// oldObj and newObj of the same resourceVersion.
	OnUpdate(oldObj, newObj T)

	// OnDelete is called when an object left the cache. When the informer
	// missed the deletion and only noticed the object was gone at a
	// relist, finalStateUnknown is true and obj is the last state the cache
	// held, which may be stale. (client-go passes a DeletedFinalStateUnknown
	// tombstone in place of the object instead; with a typed T there is
	// nothing to unwrap.)
	OnDelete(obj T, finalStateUnknown bool)
}

// HandlerFuncs adapts up to three functions to a Handler; a nil function
// ignores its notifications.
type HandlerFuncs[T any] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd calls AddFunc if it is set.
func (f HandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate calls UpdateFunc if it is set.
func (f HandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete calls DeleteFunc if it is set.
func (f HandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj, finalStateUnknown)
	}
}

// FilteringHandler passes on only the objects Filter accepts, so Handler sees
// the filtered set as if it were the whole collection: an update that moves
// an object into the set arrives as an add, one that moves it out as a
// delete. A nil Filter accepts everything; a nil Handler receives nothing.
type FilteringHandler[T any] struct {
	Filter  func(obj T) bool
	Handler Handler[T]
}

func (f FilteringHandler[T]) accepts(obj T) bool {
	return f.Handler != nil && (f.Filter == nil || f.Filter(obj))
}

// OnAdd passes obj on if Filter accepts it.
func (f FilteringHandler[T]) OnAdd(obj T, isInInitialList bool) {
	if f.accepts(obj) {
		f.Handler.OnAdd(obj, isInInitialList)
	}
}

// OnUpdate passes on an update if both states are accepted, an add of newObj
// if only it is, and a delete of oldObj if only oldObj is.
func (f FilteringHandler[T]) OnUpdate(oldObj, newObj T) {
	wasIn, isIn := f.accepts(oldObj), f.accepts(newObj)
	switch {
	case wasIn && isIn:
		f.Handler.OnUpdate(oldObj, newObj)
	case isIn:
		f.Handler.OnAdd(newObj, false)
	case wasIn:
		f.Handler.OnDelete(oldObj, false)
	}
}

// OnDelete passes obj on if Filter accepts it.
func (f FilteringHandler[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.accepts(obj) {
		f.Handler.OnDelete(obj, finalStateUnknown)
	}
}
