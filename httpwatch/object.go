package httpwatch

import (
	"encoding/json"
	"errors"
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
// Memory: the JSON bytes plus a 48-byte header. The metadata accessors return
// strings that point into the JSON rather than copies, so they cost nothing
// and pin nothing but the object itself. (A value the server escaped, say
// "\u002d", is decoded once into a few bytes after the JSON, in the same
// allocation.) The flip side: a map that keeps one of those strings as a key
// keeps the whole object alive, even after the object is replaced (an
// assignment to an existing key keeps the old key). Key maps by a string
// built from them (namespace + "/" + name), or strings.Clone the value.
// Labels, Annotations, Label and OwnerUIDs return copies.
//
// Items of a built-in list carry no kind or apiVersion on the wire, while
// watch events and custom resources do. The list scanner adds them (kind from
// the list's kind minus "List", apiVersion from the list) so that an object
// reads the same whichever way it arrived and Decode fills TypeMeta. Objects
// from NewObject are kept exactly as given.
type Object struct {
	raw                 string // the JSON; never modified
	namespace, name, rv span
	uid                 span
}

// span locates a string value in the object's allocation (possibly after
// the JSON, for decoded escapes).
type span struct{ off, n uint32 }

// NewObject checks that raw is one valid JSON object whose metadata fields,
// if present, have the right types, and returns it as an Object. raw is
// retained: the caller must not modify it afterwards.
func NewObject(raw []byte) (*Object, error) {
	if !gjson.ValidBytes(raw) {
		return nil, errors.New("new object: invalid JSON")
	}
	o, err := buildObject(raw, buildOptions{})
	if err != nil {
		return nil, fmt.Errorf("new object: %w", err)
	}
	return o, nil
}

func (o *Object) str(s span) string {
	if s.n == 0 {
		return ""
	}
	p := unsafe.Add(unsafe.Pointer(unsafe.StringData(o.raw)), s.off)
	return unsafe.String((*byte)(p), s.n)
}

// Namespace is metadata.namespace ("" for cluster-scoped objects).
func (o *Object) Namespace() string { return o.str(o.namespace) }

// Name is metadata.name.
func (o *Object) Name() string { return o.str(o.name) }

// ResourceVersion is metadata.resourceVersion.
func (o *Object) ResourceVersion() string { return o.str(o.rv) }

// UID is metadata.uid.
func (o *Object) UID() string { return o.str(o.uid) }

// Raw returns the object's JSON. The bytes are shared, not copied: never
// modify them.
func (o *Object) Raw() []byte {
	return unsafe.Slice(unsafe.StringData(o.raw), len(o.raw))
}

// String returns the JSON as a string, without copying.
func (o *Object) String() string { return o.raw }

// Get reads the value at a gjson path. The result's strings point into the
// object, so keeping one keeps the whole object alive; copy what you keep
// if the object itself may go.
func (o *Object) Get(path string) gjson.Result { return gjson.Get(o.raw, path) }

// Kind is the top-level "kind", or "" if there is none.
func (o *Object) Kind() string { return gjson.Get(o.raw, "kind").String() }

// APIVersion is the top-level "apiVersion", or "" if there is none.
func (o *Object) APIVersion() string { return gjson.Get(o.raw, "apiVersion").String() }

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
	gjson.Get(o.raw, "metadata."+field).ForEach(func(k, v gjson.Result) bool {
		if m == nil {
			m = make(map[string]string)
		}
		m[strings.Clone(k.String())] = strings.Clone(v.String())
		return true
	})
	return m
}

func (o *Object) mapEntry(field, key string) (value string, ok bool) {
	gjson.Get(o.raw, "metadata."+field).ForEach(func(k, v gjson.Result) bool {
		if k.String() == key {
			value, ok = strings.Clone(v.String()), true
			return false
		}
		return true
	})
	return value, ok
}

// OwnerUIDs returns the uid of every metadata.ownerReferences entry.
func (o *Object) OwnerUIDs() []string {
	var uids []string
	gjson.Get(o.raw, "metadata.ownerReferences").ForEach(func(_, ref gjson.Result) bool {
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
