// Package raw turns the JSON of Kubernetes-style API objects into Objects
// without decoding it into a tree: each object is copied out of the read
// buffer once, with its namespace, name, resourceVersion and uid located as
// it is copied. It reads list bodies item by item and watch streams event
// by event, checking everything it reads as encoding/json.Valid would, in
// one pass over each value.
//
// A Decoder says what to keep of each object (all of it, all but
// metadata.managedFields, or a Projection) and which Transform to apply:
//
//	d := &raw.Decoder{DropManagedFields: true}
//	list, err := d.DecodeList(body, 500)      // a list response
//	events := d.Events(watchBody)             // a watch stream
//	f, err := events.Next()                   // f.Type "ADDED"; f.Object() builds it
//	o, err := raw.NewObject([]byte(`{"metadata":{"name":"a"}}`))
//
// EventReader.Batches frames a stream in batches, one per read, that stay
// valid after later reads, so that one goroutine can frame and check a
// stream while another builds its objects (as package httpwatch does).
//
// It knows JSON and the shape of API objects, lists and watch events, not
// HTTP: package httpwatch sends the requests and gives the watch event
// types their meaning.
package raw
