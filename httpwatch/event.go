package httpwatch

import "github.com/listwatch/listwatch/raw"

// EventType is the type of a watch event as the server spells it.
type EventType string

// The watch event types a Kubernetes API server sends. Any other type is a
// *DecodeError (conformance 3).
const (
	Added    EventType = "ADDED"
	Modified EventType = "MODIFIED"
	Deleted  EventType = "DELETED"
	Bookmark EventType = "BOOKMARK"
	Error    EventType = "ERROR"
)

// Event is one decoded watch frame.
//
// For Added, Modified and Deleted, Object is the object (after the
// client dropped managedFields and applied its Transform). For Bookmark, Object holds only
// what the server sent: metadata.resourceVersion and perhaps annotations
// such as "k8s.io/initial-events-end". For Error, Err is a *StatusError from
// the server's Status and Object is nil, or, if the server sent something
// other than a Status, Err says so (conformance 6) and Object is that
// object.
type Event struct {
	Type   EventType
	Object *raw.Object
	Err    error
}
