package watchtest

import (
	"fmt"
	"net/http"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
)

// metaFields are the fields of metadata whose JSON type the real server
// checks for every kind, as it decodes into ObjectMeta: the Go type of the
// field and, for maps and lists, of their elements.
var metaFields = []struct{ name, goType, elem string }{
	{"name", "string", ""},
	{"generateName", "string", ""},
	{"namespace", "string", ""},
	{"uid", "string", ""},
	{"resourceVersion", "string", ""},
	{"generation", "int64", ""},
	{"labels", "map[string]string", "string"},
	{"annotations", "map[string]string", "string"},
	{"finalizers", "[]string", "string"},
}

// metaTypeError is the decoder's message for the first metadata field
// whose JSON value ObjectMeta cannot hold ("" if none): a label given as a
// number is the common case, which a client must not be able to write to
// watchtest when the real server refuses it.
func (d *draft) metaTypeError() string {
	for _, f := range metaFields {
		raw, ok := d.meta[f.name]
		if !ok {
			continue
		}
		v := gjson.Parse(raw)
		if bad := mistyped(v, f.goType); bad != "" {
			return cannotUnmarshal(bad, f.name, f.goType)
		}
		if f.elem == "" || !(v.IsObject() || v.IsArray()) {
			continue
		}
		var msg string
		v.ForEach(func(_, e gjson.Result) bool {
			if bad := mistyped(e, f.elem); bad != "" {
				msg = cannotUnmarshal(bad, f.name, f.elem)
			}
			return msg == ""
		})
		if msg != "" {
			return msg
		}
	}
	return ""
}

func cannotUnmarshal(kind, field, goType string) string {
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field ObjectMeta.metadata.%s of type %s", kind, field, goType)
}

// mistyped returns the JSON kind of v when a Go value of goType cannot
// hold it, "" when it can (null fits every type).
func mistyped(v gjson.Result, goType string) string {
	var kind string
	switch {
	case v.Type == gjson.Null:
		return ""
	case v.Type == gjson.String:
		kind = "string"
	case v.Type == gjson.Number:
		kind = "number"
	case v.IsBool():
		kind = "bool"
	case v.IsArray():
		kind = "array"
	default:
		kind = "object"
	}
	fits := map[string]string{"string": "string", "int64": "number", "map[string]string": "object", "[]string": "array"}[goType]
	if kind == fits {
		return ""
	}
	return kind
}

// checkMetaTypes is the real server's 400 for a create or update whose
// metadata it cannot decode.
func (d *draft) checkMetaTypes(r resource) error {
	if msg := d.metaTypeError(); msg != "" {
		return badRequest("%s in version %q cannot be handled as a %s: %s", r.Kind, r.Version, r.Kind, msg)
	}
	return nil
}

// invalidPatch is the real server's 422 for a patch whose result it cannot
// decode: the message quotes the patched object.
func invalidPatch(patched []byte, msg string) *apiserve.Error {
	detail := fmt.Sprintf("Invalid value: %q: %s", patched, msg)
	return &apiserve.Error{
		Code: http.StatusUnprocessableEntity, Reason: "Invalid",
		Message: ` "" is invalid: patch: ` + detail,
		Details: &apiserve.StatusDetails{Causes: []apiserve.StatusCause{{Reason: "FieldValueInvalid", Message: detail, Field: "patch"}}},
	}
}
