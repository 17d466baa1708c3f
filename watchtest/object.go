package watchtest

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
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
	// owners is what each field manager owns, from server-side apply. It
	// is not part of body and, unlike the rest, may be replaced under the
	// Server's lock.
	owners owners
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
// metadata fields as raw JSON text. It is read with gjson, which is several
// times faster than encoding/json at taking an object apart.
type draft struct {
	top  map[string]string
	meta map[string]string
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
	if !gjson.ValidBytes(raw) {
		return nil, badRequest("the object is not valid JSON: %s", truncate(raw))
	}
	if bytes.ContainsAny(raw, "\n\r\t") {
		// One line per object, so that even clients that wrongly split a
		// watch stream on newlines get whole frames.
		var buf bytes.Buffer
		_ = json.Compact(&buf, raw) // valid, checked above
		raw = buf.Bytes()
	}
	r := gjson.ParseBytes(raw)
	if !r.IsObject() {
		return nil, badRequest("the object is not a JSON object: %s", truncate(raw))
	}
	d := &draft{top: fieldsOf(r), meta: map[string]string{}}
	if m, ok := d.top["metadata"]; ok && m != "null" {
		mr := gjson.Parse(m)
		if !mr.IsObject() {
			return nil, badRequest("metadata is not a JSON object: %s", truncate([]byte(m)))
		}
		d.meta = fieldsOf(mr)
	}
	return d, nil
}

// fieldsOf maps the keys of a JSON object to their raw values.
func fieldsOf(r gjson.Result) map[string]string {
	m := map[string]string{}
	r.ForEach(func(k, v gjson.Result) bool {
		m[k.String()] = v.Raw
		return true
	})
	return m
}

// Built-in objects are written in the order of their Go types' fields, as
// the real server writes them: metadata first, then the fields kinds have
// in common in their order, and ObjectMeta's fields in theirs. Custom
// resources are written with sorted keys, as unstructured objects are.
var (
	builtInOrder  = []string{"metadata", "spec", "immutable", "data", "binaryData", "type", "status"}
	metadataOrder = []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
		"creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations",
		"ownerReferences", "finalizers", "managedFields"}
)

// encodeFields writes a JSON object from raw values, the keys in order
// first, then the others sorted.
func encodeFields(m map[string]string, order []string) []byte {
	keys := make([]string, 0, len(m))
	for _, k := range order {
		if _, ok := m[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(order, k) {
			keys = append(keys, k)
		}
	}
	n := 2
	for k, v := range m {
		n += len(k) + len(v) + 4
	}
	b := make([]byte, 0, n)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		q, _ := json.Marshal(k) // a string always encodes
		b = append(b, q...)
		b = append(b, ':')
		b = append(b, m[k]...)
	}
	return append(b, '}')
}

func truncate(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// str returns a string metadata field, "" when absent or not a string.
func (d *draft) str(key string) string {
	if r := gjson.Parse(d.meta[key]); r.Type == gjson.String {
		return r.String()
	}
	return ""
}

func (d *draft) topStr(key string) string {
	if r := gjson.Parse(d.top[key]); r.Type == gjson.String {
		return r.String()
	}
	return ""
}

func (d *draft) set(key string, v any) {
	b, _ := json.Marshal(v) // strings and numbers always encode
	d.meta[key] = string(b)
}

// dropEmptyMaps leaves out empty labels and annotations, as a built-in
// type's Go struct does when the real server encodes it.
func (d *draft) dropEmptyMaps() {
	for _, k := range []string{"labels", "annotations"} {
		if v, ok := d.meta[k]; ok && (v == "null" || strings.TrimSpace(strings.TrimPrefix(v, "{")) == "}") {
			delete(d.meta, k)
		}
	}
}

// checkType rejects an object whose kind or apiVersion names another type.
func (d *draft) checkType(r resource) error {
	if k := d.topStr("kind"); k != "" && k != r.Kind {
		return badRequest("the kind in the data (%s) does not match the expected kind (%s)", k, r.Kind)
	}
	if v := d.topStr("apiVersion"); v != "" && v != r.apiVersion() {
		return badRequest("the API version in the data (%s) does not match the expected API version (%s)", v, r.apiVersion())
	}
	return nil
}

func (d *draft) labels() (selector.Set, error) {
	raw, ok := d.meta["labels"]
	if !ok || raw == "null" {
		return nil, nil
	}
	r := gjson.Parse(raw)
	if !r.IsObject() {
		return nil, badRequest("metadata.labels must map strings to strings, not %s", truncate([]byte(raw)))
	}
	l := selector.Set{}
	var bad string
	r.ForEach(func(k, v gjson.Result) bool {
		if v.Type != gjson.String {
			bad = k.String()
			return false
		}
		l[k.String()] = v.String()
		return true
	})
	if bad != "" {
		return nil, badRequest("metadata.labels must map strings to strings: the value of %q is not a string", bad)
	}
	return l, nil
}

func (d *draft) hasFinalizers() (bool, error) {
	raw, ok := d.meta["finalizers"]
	if !ok || raw == "null" {
		return false, nil
	}
	r := gjson.Parse(raw)
	if !r.IsArray() {
		return false, badRequest("metadata.finalizers must be a list of strings, not %s", truncate([]byte(raw)))
	}
	for _, f := range r.Array() {
		if f.Type != gjson.String {
			return false, badRequest("metadata.finalizers must be a list of strings, not %s", truncate([]byte(raw)))
		}
	}
	return len(r.Array()) > 0, nil
}

// object encodes the draft into an object at resourceVersion rv, laid out
// as a built-in object or as a custom one. The draft's metadata must
// already hold name, namespace and uid.
func (d *draft) object(rv int64, builtIn bool) (*object, error) {
	d.set("resourceVersion", strconv.FormatInt(rv, 10))
	labels, err := d.labels()
	if err != nil {
		return nil, err
	}
	fin, err := d.hasFinalizers()
	if err != nil {
		return nil, err
	}
	top := make(map[string]string, len(d.top))
	for k, v := range d.top {
		if k != "kind" && k != "apiVersion" {
			top[k] = v
		}
	}
	var topOrder, metaOrder []string
	if builtIn {
		topOrder, metaOrder = builtInOrder, metadataOrder
	}
	top["metadata"] = string(encodeFields(d.meta, metaOrder))
	o := &object{
		namespace: d.str("namespace"), name: d.str("name"), uid: d.str("uid"),
		rv: rv, body: encodeFields(top, topOrder), labels: labels, finalizers: fin,
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

// withoutRV returns a copy of o without metadata.resourceVersion: a dry-run
// create, which was never stored.
func withoutRV(o *object) *object {
	c := *o
	r := gjson.GetBytes(o.body, "metadata.resourceVersion")
	if r.Index > 0 {
		// Cut the member and the comma on one side of it.
		start, end := r.Index, r.Index+len(r.Raw)
		for start > 0 && o.body[start-1] != ',' && o.body[start-1] != '{' {
			start--
		}
		switch {
		case o.body[start-1] == ',':
			start--
		case end < len(o.body) && o.body[end] == ',':
			end++
		}
		c.body = append(append([]byte(nil), o.body[:start]...), o.body[end:]...)
	}
	return &c
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}

// counted returns what metadata.generation counts the changes of: a
// built-in object's spec or, as the real server's custom resource
// strategy does, all of a custom resource but its metadata and, when it
// has a status subresource, its status.
func (r resource) counted(o *object) string {
	if r.BuiltIn {
		return gjson.GetBytes(o.body, "spec").Raw
	}
	var b strings.Builder
	b.WriteByte('{')
	gjson.ParseBytes(o.body).ForEach(func(k, v gjson.Result) bool {
		if k.Str == "metadata" || r.Status && k.Str == "status" {
			return true
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(k.Raw)
		b.WriteByte(':')
		b.WriteString(v.Raw)
		return true
	})
	b.WriteByte('}')
	return b.String()
}

// sameJSON reports whether two JSON values are the same value: the real
// server compares decoded objects, so members in another order or escaped
// differently (as a patch re-encodes them) change nothing. Only the parts
// whose text differs are read.
func sameJSON(a, b string) bool {
	return a == b || sameValue(gjson.Parse(a), gjson.Parse(b))
}

func sameValue(a, b gjson.Result) bool {
	if a.Raw == b.Raw {
		return true
	}
	switch {
	case a.IsObject() && b.IsObject():
		am, bm := a.Map(), b.Map()
		if len(am) != len(bm) {
			return false
		}
		for k, av := range am {
			if bv, ok := bm[k]; !ok || !sameValue(av, bv) {
				return false
			}
		}
		return true
	case a.IsArray() && b.IsArray():
		aa, ba := a.Array(), b.Array()
		if len(aa) != len(ba) {
			return false
		}
		for i := range aa {
			if !sameValue(aa[i], ba[i]) {
				return false
			}
		}
		return true
	case a.Type == gjson.String && b.Type == gjson.String:
		return a.Str == b.Str
	}
	return false // numbers written differently, or values of other types
}

// prefix is how an object of r starts when written with its kind and
// apiVersion: built-in types put kind first, custom resources are sorted.
func prefix(r resource) []byte {
	return r.layout().Prefix()
}

// layout is how the serving core writes r's objects.
func (r resource) layout() apiserve.Layout {
	return apiserve.Layout{Kind: r.Kind, APIVersion: r.apiVersion(), Custom: !r.BuiltIn}
}
