package raw

import "fmt"

// Transform rewrites an object before it is returned (and so before anything
// caches it). It must not modify its argument, which is immutable; it returns
// the object to keep, which may be the same one. A nil object with a nil
// error is an error: a transform cannot drop objects, since dropping a
// DELETED event would leave a cache holding an object forever.
type Transform func(*Object) (*Object, error)

// Decoder says how JSON becomes Objects: a list body (DecodeList), a watch
// stream (Events) or one object (Decode). The zero Decoder keeps objects
// whole. A Decoder reuses a scratch buffer, so it is for one goroutine at a
// time; set its fields before the first use.
type Decoder struct {
	// MaxFrameSize bounds one list item or watch frame of a stream, in
	// bytes; 0 means DefaultMaxFrameSize. Past it, reading fails with an
	// error wrapping ErrFrameTooLarge.
	MaxFrameSize int
	// DropManagedFields leaves metadata.managedFields out of every object.
	DropManagedFields bool
	// Projection, if set, keeps only the fields it names.
	Projection *Projection
	// Transform, if set, is applied to every object after the projection.
	Transform Transform

	scratch []byte // the last projected object, reused
}

// InputError is input that is not what was expected where it was read:
// invalid JSON, a value over the size limit, a list or watch frame of the
// wrong shape. Offset is where in the stream the problem was found (for a
// watch stream, where the event starts).
type InputError struct {
	Offset int64
	Err    error
}

func (e *InputError) Error() string {
	return fmt.Sprintf("invalid input at byte %d: %v", e.Offset, e.Err)
}

func (e *InputError) Unwrap() error { return e.Err }

// Decode checks that src is valid JSON and builds the Object it holds, as
// the Decoder says. It keeps no reference to src.
func (d *Decoder) Decode(src []byte) (*Object, error) {
	if err := Validate(src); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	return d.object(src, nil, knownSpans{})
}

// object builds an Object from (a copy of) src, cut by the projection, and
// applies the transform; known are members of src already located.
func (d *Decoder) object(src []byte, typeMeta []byte, known knownSpans) (*Object, error) {
	var o *Object
	var err error
	if d.Projection == nil {
		o, err = buildObject(src, buildOptions{dropManagedFields: d.DropManagedFields, typeMeta: typeMeta, known: known})
	} else if d.scratch, err = d.Projection.appendTo(d.scratch[:0], src, known, d.DropManagedFields); err == nil {
		o, err = buildObject(d.scratch, buildOptions{typeMeta: typeMeta})
	}
	if err != nil {
		return nil, err
	}
	if d.Transform == nil {
		return o, nil
	}
	t, err := d.Transform(o)
	if err != nil {
		return nil, fmt.Errorf("transform %s/%s: %w", o.Namespace(), o.Name(), err)
	}
	if t == nil {
		return nil, fmt.Errorf("transform %s/%s: returned no object", o.Namespace(), o.Name())
	}
	return t, nil
}
