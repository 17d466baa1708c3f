package watchtest

import (
	"encoding/json"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/selector"
)

// object is one stored version of an object. It never changes once made, so
// handlers write it to clients without holding the server's lock.
type object struct {
	key       string // "namespace/name", or "name" when cluster-scoped
	namespace string
	name      string
	uid       string
	rv        int64
	// body is the object's JSON without kind and apiVersion, which are
	// added when it is written (list items of built-in resources go
	// without them).
	body       []byte
	labels     selector.Set
	finalizers bool // metadata.finalizers is not empty
	deleting   bool // metadata.deletionTimestamp is set
	// tombstone marks the end of an object's life in its version chain;
	// body is then the last state, at the deletion's resourceVersion.
	tombstone bool
}

// Get reads a field for field selectors. A path the object lacks reads as
// absent, which the selector treats as "".
func (o *object) Get(path string) (string, bool) {
	switch path {
	case "metadata.name":
		return o.name, true
	case "metadata.namespace":
		return o.namespace, o.namespace != ""
	}
	r := gjson.GetBytes(o.body, path)
	if !r.Exists() {
		return "", false
	}
	return r.String(), true
}

// draft is an object being built from a client's JSON: its top-level and
// metadata fields, still raw.
type draft struct {
	top  map[string]json.RawMessage
	meta map[string]json.RawMessage
}

// newDraft reads an object given as JSON ([]byte, json.RawMessage or
// string) or as any value json.Marshal accepts.
func newDraft(in any) (*draft, error) {
	var raw []byte
	switch v := in.(type) {
	case []byte:
		raw = v
	case json.RawMessage:
		raw = v
	case string:
		raw = []byte(v)
	default:
		b, err := json.Marshal(in)
		if err != nil {
			return nil, badRequest("the object cannot be encoded as JSON: %v", err)
		}
		raw = b
	}
	d := &draft{meta: map[string]json.RawMessage{}}
	if err := json.Unmarshal(raw, &d.top); err != nil || d.top == nil {
		return nil, badRequest("the object is not a JSON object: %s", truncate(raw))
	}
	if m, ok := d.top["metadata"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &d.meta); err != nil || d.meta == nil {
			return nil, badRequest("metadata is not a JSON object: %s", truncate(m))
		}
	}
	return d, nil
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// str returns a string metadata field, "" when absent or not a string.
func (d *draft) str(key string) string {
	var s string
	if raw, ok := d.meta[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (d *draft) topStr(key string) string {
	var s string
	if raw, ok := d.top[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (d *draft) set(key string, v any) {
	b, _ := json.Marshal(v) // strings, numbers and maps of them always encode
	d.meta[key] = b
}

// checkType rejects an object whose kind or apiVersion names another type.
func (d *draft) checkType(r Resource) error {
	if k := d.topStr("kind"); k != "" && k != r.Kind {
		return badRequest("the kind in the data (%s) does not match the expected kind (%s)", k, r.Kind)
	}
	if v := d.topStr("apiVersion"); v != "" && v != r.APIVersion() {
		return badRequest("the API version in the data (%s) does not match the expected API version (%s)", v, r.APIVersion())
	}
	return nil
}

func (d *draft) labels() (selector.Set, error) {
	raw, ok := d.meta["labels"]
	if !ok || string(raw) == "null" {
		return nil, nil
	}
	var l selector.Set
	if err := json.Unmarshal(raw, &l); err != nil {
		return nil, badRequest("metadata.labels must map strings to strings: %v", err)
	}
	return l, nil
}

func (d *draft) hasFinalizers() (bool, error) {
	raw, ok := d.meta["finalizers"]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	var f []string
	if err := json.Unmarshal(raw, &f); err != nil {
		return false, badRequest("metadata.finalizers must be a list of strings: %v", err)
	}
	return len(f) > 0, nil
}

// object encodes the draft into an object of resource r at resourceVersion
// rv. The draft's metadata must already hold name, namespace and uid.
func (d *draft) object(rv int64) (*object, error) {
	d.set("resourceVersion", strconv.FormatInt(rv, 10))
	labels, err := d.labels()
	if err != nil {
		return nil, err
	}
	fin, err := d.hasFinalizers()
	if err != nil {
		return nil, err
	}
	meta, err := json.Marshal(d.meta)
	if err != nil {
		return nil, badRequest("metadata cannot be encoded: %v", err)
	}
	top := make(map[string]json.RawMessage, len(d.top))
	for k, v := range d.top {
		if k != "kind" && k != "apiVersion" {
			top[k] = v
		}
	}
	top["metadata"] = meta
	body, err := json.Marshal(top)
	if err != nil {
		return nil, badRequest("the object cannot be encoded: %v", err)
	}
	o := &object{
		namespace: d.str("namespace"), name: d.str("name"), uid: d.str("uid"),
		rv: rv, body: body, labels: labels, finalizers: fin,
		deleting: d.str("deletionTimestamp") != "",
	}
	o.key = objectKey(o.namespace, o.name)
	return o, nil
}

// withRV returns a copy of o at another resourceVersion: the form in which
// the server reports the last state of a deleted object, or of one that
// stopped matching a watch's selectors.
func withRV(o *object, rv int64) *object {
	c := *o
	c.rv = rv
	// Every stored body has metadata.resourceVersion; splice the new value
	// in place rather than decoding the whole object again.
	r := gjson.GetBytes(o.body, "metadata.resourceVersion")
	if r.Index > 0 {
		body := make([]byte, 0, len(o.body)+4)
		body = append(body, o.body[:r.Index]...)
		body = strconv.AppendQuote(body, strconv.FormatInt(rv, 10))
		c.body = append(body, o.body[r.Index+len(r.Raw):]...)
	}
	return &c
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// sameContent reports whether two bodies differ only in resourceVersion:
// the real server skips such writes without a new version.
func sameContent(a, b *object) bool {
	return string(a.body) == string(withRV(b, a.rv).body)
}

// specOf returns the object's spec, to tell whether an update bumps
// metadata.generation.
func specOf(o *object) string { return gjson.GetBytes(o.body, "spec").Raw }

// prefix is how an object of r starts when written with its kind and
// apiVersion: built-in types put kind first, custom resources are sorted.
func prefix(r Resource) []byte {
	kind, _ := json.Marshal(r.Kind)
	av, _ := json.Marshal(r.APIVersion())
	if r.BuiltIn {
		return []byte(`{"kind":` + string(kind) + `,"apiVersion":` + string(av) + `,`)
	}
	return []byte(`{"apiVersion":` + string(av) + `,"kind":` + string(kind) + `,`)
}
