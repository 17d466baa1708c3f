package httpwatch

import (
	"encoding/json"
	"fmt"

	"github.com/tidwall/gjson"
)

// Object is one API object: the raw JSON the server sent, copied out of the
// read buffer, plus the metadata every layer needs, parsed once. An Object is
// immutable; share it freely.
type Object struct {
	raw             []byte
	namespace       string
	name            string
	resourceVersion string
	uid             string
}

// NewObject parses raw as one API object. raw is retained; the caller must
// not modify it afterwards.
func NewObject(raw []byte) (*Object, error) {
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("parse object: invalid JSON")
	}
	md := gjson.GetBytes(raw, "metadata")
	return &Object{
		raw:             raw,
		namespace:       md.Get("namespace").String(),
		name:            md.Get("name").String(),
		resourceVersion: md.Get("resourceVersion").String(),
		uid:             md.Get("uid").String(),
	}, nil
}

func (o *Object) Namespace() string       { return o.namespace }
func (o *Object) Name() string            { return o.name }
func (o *Object) ResourceVersion() string { return o.resourceVersion }
func (o *Object) UID() string             { return o.uid }
func (o *Object) Raw() []byte             { return o.raw }

// Get reads the value at a gjson path.
func (o *Object) Get(path string) gjson.Result { return gjson.GetBytes(o.raw, path) }

// Decode unmarshals the object into v.
func (o *Object) Decode(v any) error { return json.Unmarshal(o.raw, v) }
