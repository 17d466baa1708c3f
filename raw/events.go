package raw

import (
	"errors"
	"fmt"
	"io"
)

// EventReader frames a watch stream, {"type": ..., "object": {...}} after
// {"type": ..., "object": {...}}, one event at a time. It checks each frame
// whole as encoding/json.Valid would while finding where it ends, and notes
// where the event's object and its members are, so that building the object
// reads none of it twice. What the event types mean is the caller's. Make
// one with Decoder.Events.
type EventReader struct {
	rd *reader
	d  *Decoder
}

// Events returns a reader of the watch stream body; its frames build their
// objects with d. Frames up to d.MaxFrameSize bytes are read.
func (d *Decoder) Events(body io.Reader) *EventReader {
	rd := newReader(body, d.MaxFrameSize, false)
	rd.sc.spans = &spanNotes{level: 3} // the members of the event's object
	return &EventReader{rd: rd, d: d}
}

// Frame is one watch event as framed: its type, not yet checked against
// the types the API defines, and its object, not yet built. It reads the
// reader's buffer, so it is valid until the next call to Next.
type Frame struct {
	Type   string // the "type" member, unquoted
	Offset int64  // where the frame starts in the stream

	src   []byte     // the object, if the frame has one
	known knownSpans // members of src already located
	d     *Decoder
}

// Next returns the next frame. At a clean end of the stream, between
// frames, it returns io.EOF. An error from reading the body is returned
// wrapped, with where it happened; a frame that is not valid JSON, too
// large, or not an object with a "type" string is an *InputError.
func (er *EventReader) Next() (Frame, error) {
	rd := er.rd
	c, err := rd.peek()
	if err != nil {
		if err == io.EOF {
			return Frame{}, io.EOF
		}
		return Frame{}, fmt.Errorf("read stream: %w", err)
	}
	at := rd.offset()
	if c != '{' {
		return Frame{}, &InputError{Offset: at, Err: fmt.Errorf("expected a JSON object, found %q", c)}
	}
	frame, err := rd.container()
	if err != nil {
		if rd.fromSource(err) {
			return Frame{}, fmt.Errorf("read stream at byte %d: %w", at, err)
		}
		return Frame{}, &InputError{Offset: at, Err: err}
	}
	f, err := er.frame(frame)
	if err != nil {
		return Frame{}, &InputError{Offset: at, Err: err}
	}
	f.Offset = at
	return f, nil
}

// frame finds the type and object of one event. The scanner that framed it
// located the frame's last container member, normally the object, which
// then needs no second scan, nor do the object's members it noted.
func (er *EventReader) frame(frame []byte) (Frame, error) {
	known := er.rd.sc.spans.noted()
	typ, obj, ok := notedEvent(frame, &known)
	if !ok {
		var err error
		if typ, obj, err = er.walk(frame); err != nil {
			return Frame{}, err
		}
		known.members = nil // the object may not be the one noted
	}
	if typ == nil || typ[0] != '"' {
		return Frame{}, errors.New(`event has no "type" string`)
	}
	t, err := keyString(typ)
	if err != nil {
		return Frame{}, err
	}
	f := Frame{Type: t, d: er.d}
	if obj.end != 0 && frame[obj.start] == '{' {
		f.src = frame[obj.start:obj.end]
		f.known = known
		f.known.base = obj.start
	}
	return f, nil
}

// notedEvent finds the type and object of an event from the scanner's
// notes, or reports that they do not say.
func notedEvent(frame []byte, known *knownSpans) (typ []byte, obj valueRange, ok bool) {
	if known.members == nil || frame[0] != '{' {
		return nil, obj, false
	}
	var buf [4]notedMember
	members, ok := known.notedMembers(frame, 0, len(frame), 1, buf[:0])
	if !ok {
		return nil, obj, false
	}
	for _, m := range members {
		switch string(m.key(frame)) {
		case "type":
			typ = frame[m.valueStart:m.valueEnd]
		case "object":
			obj = valueRange{m.valueStart, m.valueEnd}
		}
	}
	return typ, obj, true
}

// walk finds the type and object of an event by reading its members.
func (er *EventReader) walk(frame []byte) (typ []byte, obj valueRange, err error) {
	child := er.rd.sc.child
	it := newObjectIter(frame, 0)
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		if string(m.key) == "object" && it.i == child.start && child.end > child.start {
			obj, it.i = child, child.end
			continue
		}
		_, end, err := skipValue(frame, it.i)
		if err != nil {
			return nil, obj, fmt.Errorf("value of %q: %w", m.key, err)
		}
		switch string(m.key) {
		case "type":
			typ = frame[it.i:end]
		case "object":
			obj = valueRange{it.i, end}
		}
		it.i = end
	}
	return typ, obj, it.err
}

// Object builds the event's object with the reader's Decoder: cut by its
// projection, without managedFields unless kept, and transformed.
func (f *Frame) Object() (*Object, error) {
	if f.src == nil {
		return nil, f.noObject()
	}
	o, err := f.d.object(f.src, nil, f.known)
	if err != nil {
		return nil, fmt.Errorf("%s event: %w", f.Type, err)
	}
	return o, nil
}

// Plain builds the event's object as the server sent it, for events that
// carry no object of the resource (a bookmark's metadata, an error's
// Status): projections and transforms are for objects.
func (f *Frame) Plain() (*Object, error) {
	if f.src == nil {
		return nil, f.noObject()
	}
	o, err := buildObject(f.src, buildOptions{})
	if err != nil {
		return nil, fmt.Errorf("%s event: %w", f.Type, err)
	}
	return o, nil
}

func (f *Frame) noObject() error { return fmt.Errorf("%s event has no object", f.Type) }
