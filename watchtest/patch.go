package watchtest

import (
	"mime"
	"net/http"

	"github.com/listwatch/listwatch/apiserve"
)

// The patch media types the real server accepts.
const (
	mergePatchType     = "application/merge-patch+json"
	jsonPatchType      = "application/json-patch+json"
	strategicPatchType = "application/strategic-merge-patch+json"
	applyPatchType     = "application/apply-patch+yaml"
)

// checkPatchType answers 415 for a media type the resource cannot be
// patched with; custom resources have no strategic merge patch.
func checkPatchType(r resource, ct string) *apiserve.Error {
	switch ct {
	case mergePatchType, jsonPatchType, applyPatchType:
		return nil
	case strategicPatchType:
		if r.BuiltIn {
			return nil
		}
		return &apiserve.Error{Code: http.StatusUnsupportedMediaType, Reason: "UnsupportedMediaType",
			Message: "the body of the request was in an unknown format - accepted media types include: " + jsonPatchType + ", " + mergePatchType + ", " + applyPatchType}
	}
	return &apiserve.Error{Code: http.StatusUnsupportedMediaType, Reason: "UnsupportedMediaType", Message: "415: Unsupported Media Type", Details: &apiserve.StatusDetails{}}
}

func (s *Server) servePatch(w http.ResponseWriter, req *http.Request, rt route, body []byte) {
	r := rt.st.res
	ct, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	if err := checkPatchType(r, ct); err != nil {
		err.Write(w)
		return
	}
	opts, aerr := parseWriteOptions(req, "PatchOptions")
	if aerr != nil {
		aerr.Write(w)
		return
	}
	if ct == applyPatchType && req.URL.Query().Get("fieldManager") == "" {
		invalidOptions("PatchOptions", []apiserve.StatusCause{{Reason: "FieldValueRequired", Field: "fieldManager", Message: "Required value: is required for apply patch"}}).Write(w)
		return
	}
	opts.subresource = rt.sub
	o, created, err := s.patch(r, rt.namespace, rt.name, ct, body, opts)
	if err != nil {
		apiserve.AsError(err).Write(w)
		return
	}
	code := http.StatusOK
	if created {
		code = http.StatusCreated
	}
	if rt.sub == "scale" {
		writeScale(w, code, r, o)
		return
	}
	writeObject(w, code, rt.st, o)
}

// patch applies a patch of media type ct to an object and reports whether
// it created it, as an apply of a missing object does.
func (s *Server) patch(r resource, ns, name, ct string, body []byte, opts writeOptions) (*object, bool, error) {
	var cfg map[string]any
	if ct == applyPatchType {
		var err error
		if cfg, err = decodeApply(body); err != nil {
			return nil, false, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storeLocked(r)
	old := st.current(objectKey(ns, name))
	if old == nil {
		if ct != applyPatchType || opts.subresource != "" {
			return nil, false, notFound(r, name)
		}
		o, err := s.applyCreateLocked(st, ns, name, cfg, opts)
		return o, err == nil, err
	}
	var doc any
	if opts.subresource == "scale" {
		doc = scaleDoc(r, old)
	} else {
		var err error
		if doc, err = decodeJSON(s.render(r, old)); err != nil {
			return nil, false, err
		}
	}
	patched, err := patchDoc(ct, doc, body, cfg, old.owners, &opts)
	if err != nil {
		return nil, false, err
	}
	if opts.subresource == "scale" {
		o, err := s.setScaleLocked(st, old, patched, opts)
		return o, false, err
	}
	o, err := s.replacePatchedLocked(st, old, patched, opts)
	return o, false, err
}

// patchDoc applies the patch to doc. An apply also sets opts.owners.
func patchDoc(ct string, doc any, body []byte, cfg map[string]any, prev owners, opts *writeOptions) (any, error) {
	switch ct {
	case jsonPatchType:
		return jsonPatch(doc, body)
	case applyPatchType:
		live, _ := doc.(map[string]any)
		merged, next, err := applyTo(live, cfg, prev, opts.manager, opts.force)
		opts.owners = next
		return merged, err
	}
	p, err := decodeJSON(body)
	if err != nil {
		return nil, badRequest("invalid JSON patch")
	}
	if _, ok := p.(map[string]any); !ok {
		return nil, badRequest("error decoding patch: json: cannot unmarshal %s into Go value of type map[string]interface {}", jsonKind(p))
	}
	if ct == strategicPatchType {
		return strategicMerge(doc, p), nil
	}
	return mergePatch(doc, p), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case nil:
		return "null"
	case bool:
		return "bool"
	}
	return "number"
}

// replacePatchedLocked stores the patched form of old, which may not
// change its identity.
func (s *Server) replacePatchedLocked(st *store, old *object, patched any, opts writeOptions) (*object, error) {
	r := st.res
	b, err := encodeJSON(patched)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(b)
	if err != nil {
		return nil, err
	}
	if err := d.checkType(r); err != nil {
		return nil, err
	}
	if msg := d.metaTypeError(); msg != "" {
		return nil, invalidPatch(b, msg)
	}
	if n := d.str("name"); n != old.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", n, old.name)
	}
	if uid := d.str("uid"); uid != old.uid {
		return nil, invalidObject(r, old.name, "metadata.uid", "Invalid value: \""+uid+"\": field is immutable")
	}
	if opts.strict {
		if err := checkStrict(r, b); err != nil {
			return nil, err
		}
	}
	return s.replaceLocked(st, old, d, opts)
}

// applyCreateLocked creates an object from an apply configuration.
func (s *Server) applyCreateLocked(st *store, ns, name string, cfg map[string]any, opts writeOptions) (*object, error) {
	meta, _ := cfg["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		cfg["metadata"] = meta
	}
	if n, _ := meta["name"].(string); n != name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", n, name)
	}
	if n, _ := meta["namespace"].(string); n != "" && n != ns && st.res.Namespaced {
		return nil, badRequest("the namespace of the provided object does not match the namespace sent on the request")
	}
	if uid, _ := meta["uid"].(string); uid != "" {
		// The uid is a precondition: it names an incarnation that is gone.
		return nil, missingUID(st.res, name, uid)
	}
	b, err := encodeJSON(cfg)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(b)
	if err != nil {
		return nil, err
	}
	if err := d.checkType(st.res); err != nil {
		return nil, err
	}
	if want := leaves(cfg); len(want) > 0 {
		fo := &fieldOwner{name: opts.manager, apply: true, fields: map[string]bool{}}
		for p := range want {
			fo.fields[p] = true
		}
		opts.owners = owners{opts.manager: fo}
	}
	return s.createLocked(st, ns, d, opts)
}
