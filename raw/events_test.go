package raw

import (
	"io"
)

// watchEvent is a decoded frame: its type and its object, built as
// httpwatch builds them (as sent for a bookmark or an error, with the
// Decoder otherwise).
type watchEvent struct {
	Type   string
	Object *Object
}

// testWatcher reads a watch stream into watchEvents, as httpwatch's watcher
// does but for what the API's event types mean: a frame whose object does
// not build is an *InputError at the frame's offset.
type testWatcher struct {
	er *EventReader
}

func newTestWatcher(body io.Reader, d *Decoder) *testWatcher {
	return &testWatcher{er: d.Events(body)}
}

func (w *testWatcher) Next() (watchEvent, error) {
	f, err := w.er.Next()
	if err != nil {
		return watchEvent{}, err
	}
	o, err := buildFrame(f)
	if err != nil {
		return watchEvent{}, err
	}
	return watchEvent{Type: f.Type, Object: o}, nil
}

// buildFrame builds a frame's object as httpwatch does: a bookmark's or an
// error's as sent, the resource's with the Decoder.
func buildFrame(f Frame) (o *Object, err error) {
	switch f.Type {
	case "BOOKMARK", "ERROR":
		o, err = f.Plain()
	default:
		o, err = f.Object()
	}
	if err != nil {
		return nil, &InputError{Offset: f.Offset, Err: err}
	}
	return o, nil
}

// podFrame is a small, valid watch event.
const podFrame = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"5","uid":"u1"}}}`
