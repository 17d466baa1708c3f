package httpwatch

// EventType is the type of a watch event as the server spells it.
type EventType string

// The watch event types a Kubernetes API server sends.
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Event is one decoded watch frame. For Error events Object is nil and Err
// holds the server's Status as a *StatusError.
type Event struct {
	Type   EventType
	Object *Object
	Err    error
}
