package raw

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"unsafe"

	"github.com/tidwall/gjson"
)

// Object is one API object: the raw JSON the server sent, copied out of the
// read buffer, plus where its namespace, name, resourceVersion and uid are,
// found once when it was built. An Object is immutable; share it freely
// between goroutines.
//
// Memory: one allocation holding a 4-byte header, a 12-byte table locating
// the four metadata fields (32 bytes if one lies past the first 64 KiB or is
// over 255 bytes) and the JSON, plus the 8-byte Object itself. The metadata
// accessors return strings that point into the JSON rather than copies, so
// they cost nothing and pin nothing but the object itself. (A value the
// server escaped, say "\u002d", is decoded once into a few bytes after the
// JSON.) The flip side: a map that keeps one of those strings as a key keeps
// the whole object alive, even after the object is replaced (an assignment
// to an existing key keeps the old key). Key maps by a string built from
// them (namespace + "/" + name), or strings.Clone the value. Labels,
// Annotations, Label and OwnerUIDs return copies.
//
// Items of a built-in list carry no kind or apiVersion on the wire, while
// watch events and custom resources do. The list scanner adds them (kind from
// the list's kind minus "List", apiVersion from the list) so that an object
// reads the same whichever way it arrived and Decode fills TypeMeta. Objects
// from NewObject are kept exactly as given, but for repeated keys.
//
// A key repeated at the top level or in metadata counts once, the last time,
// as for the API server and encoding/json: the earlier ones are left out of
// the copy, so that the accessors, Get and Decode all read the same value.
// Deeper, repeats are kept: Get reads the first, Decode the last (Label and
// Annotation read the last). A real server never sends them.
type Object struct {
	// p is the start of the allocation buildObject laid out (header, table,
	// JSON, decoded escapes; see headerSize), never modified; nil in the
	// zero Object.
	p *byte
}

// NewObject checks that data is one valid JSON object whose metadata
// fields, if present, have the right types, and returns it as an Object
// holding a copy of data.
func NewObject(data []byte) (*Object, error) {
	if err := Validate(data); err != nil {
		return nil, fmt.Errorf("new object: invalid JSON: %w", err)
	}
	o, err := buildObject(data, buildOptions{})
	if err != nil {
		return nil, fmt.Errorf("new object: %w", err)
	}
	return o, nil
}

// header reads the allocation's header; o.p must not be nil.
func (o *Object) header() uint32 {
	return binary.LittleEndian.Uint32(unsafe.Slice(o.p, headerSize))
}

// json is where the JSON starts, after the header h and its table.
func (o *Object) json(h uint32) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(o.p), headerSize+tableSize(h))
}

// field returns metadata field f (fNamespace...) from the span table.
func (o *Object) field(f int) string {
	if o.p == nil {
		return "" // the zero Object
	}
	h := o.header()
	off, size := o.span(h, f)
	if size == 0 {
		return ""
	}
	return unsafe.String((*byte)(unsafe.Add(o.json(h), off)), size)
}

// span reads field f's offset from the start of the JSON and its length
// from the table after header h.
func (o *Object) span(h uint32, f int) (off, size uint32) {
	if h&wideTable == 0 {
		t := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(o.p), headerSize+3*f)), 3)
		return uint32(binary.LittleEndian.Uint16(t)), uint32(t[2])
	}
	t := unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(o.p), headerSize+8*f)), 8)
	return binary.LittleEndian.Uint32(t), binary.LittleEndian.Uint32(t[4:])
}

// Namespace is metadata.namespace ("" for cluster-scoped objects).
func (o *Object) Namespace() string { return o.field(fNamespace) }

// Name is metadata.name.
func (o *Object) Name() string { return o.field(fName) }

// ResourceVersion is metadata.resourceVersion.
func (o *Object) ResourceVersion() string { return o.field(fResourceVersion) }

// UID is metadata.uid.
func (o *Object) UID() string { return o.field(fUID) }

// Raw returns the object's JSON. The bytes are shared, not copied: never
// modify them.
func (o *Object) Raw() []byte {
	s := o.String()
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// String returns the JSON as a string, without copying.
func (o *Object) String() string {
	if o.p == nil {
		return ""
	}
	h := o.header()
	return unsafe.String((*byte)(o.json(h)), h&^wideTable)
}

// Get reads the value at a gjson path. The result's strings point into the
// object, so keeping one keeps the whole object alive; copy what you keep
// if the object itself may go.
func (o *Object) Get(path string) gjson.Result { return gjson.Get(o.String(), path) }

// Kind is the top-level "kind", or "" if there is none.
func (o *Object) Kind() string { return gjson.Get(o.String(), "kind").String() }

// APIVersion is the top-level "apiVersion", or "" if there is none.
func (o *Object) APIVersion() string { return gjson.Get(o.String(), "apiVersion").String() }

// Labels returns metadata.labels as a new map (nil if there are none).
func (o *Object) Labels() map[string]string { return o.stringMap("labels") }

// Annotations returns metadata.annotations as a new map (nil if there are
// none).
func (o *Object) Annotations() map[string]string { return o.stringMap("annotations") }

// Label returns one label. Unlike Get it needs no escaping of the dots and
// slashes in keys such as "app.kubernetes.io/name".
func (o *Object) Label(key string) (string, bool) { return o.mapEntry("labels", key) }

// Annotation returns one annotation, like Label.
func (o *Object) Annotation(key string) (string, bool) { return o.mapEntry("annotations", key) }

func (o *Object) stringMap(field string) map[string]string {
	var m map[string]string
	gjson.Get(o.String(), "metadata."+field).ForEach(func(k, v gjson.Result) bool {
		if m == nil {
			m = make(map[string]string)
		}
		m[strings.Clone(k.String())] = strings.Clone(v.String())
		return true
	})
	return m
}

// mapEntry reads the last entry with the key, as Labels and Decode would.
func (o *Object) mapEntry(field, key string) (value string, ok bool) {
	var last gjson.Result
	gjson.Get(o.String(), "metadata."+field).ForEach(func(k, v gjson.Result) bool {
		if k.String() == key {
			last, ok = v, true
		}
		return true
	})
	return strings.Clone(last.String()), ok
}

// OwnerUIDs returns the uid of every metadata.ownerReferences entry.
func (o *Object) OwnerUIDs() []string {
	var uids []string
	gjson.Get(o.String(), "metadata.ownerReferences").ForEach(func(_, ref gjson.Result) bool {
		if uid := ref.Get("uid").String(); uid != "" {
			uids = append(uids, strings.Clone(uid))
		}
		return true
	})
	return uids
}

// Decode unmarshals the object into v, typically a user struct.
func (o *Object) Decode(v any) error {
	if err := json.Unmarshal(o.Raw(), v); err != nil {
		return fmt.Errorf("decode %s/%s: %w", o.Namespace(), o.Name(), err)
	}
	return nil
}
