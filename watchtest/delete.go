package watchtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
)

// deleteOptions are a delete's options, from its query and its
// DeleteOptions body.
type deleteOptions struct {
	writeOptions
	propagation string // "", Foreground, Background or Orphan
	uid, rv     string // preconditions
}

// parseDeleteOptions reads a delete's options. The body, if any, is a
// DeleteOptions object; its fields win over the query's.
func parseDeleteOptions(req *http.Request, body []byte) (deleteOptions, *apiserve.Error) {
	wo, err := parseWriteOptions(req, "DeleteOptions")
	if err != nil {
		return deleteOptions{}, err
	}
	o := deleteOptions{writeOptions: wo, propagation: req.URL.Query().Get("propagationPolicy")}
	if len(body) > 0 {
		if !gjson.ValidBytes(body) || !gjson.ParseBytes(body).IsObject() {
			return o, badRequest("the body of a delete must be a DeleteOptions object: %s", truncate(body))
		}
		b := gjson.ParseBytes(body)
		if p := b.Get("propagationPolicy"); p.Exists() {
			o.propagation = p.String()
		}
		o.uid = b.Get("preconditions.uid").String()
		o.rv = b.Get("preconditions.resourceVersion").String()
		if dr := b.Get("dryRun").Array(); len(dr) > 0 {
			vals := make([]string, len(dr))
			for i, v := range dr {
				vals[i] = v.String()
			}
			if slices.ContainsFunc(vals, func(v string) bool { return v != "All" }) {
				return o, invalidOptions("DeleteOptions", []apiserve.StatusCause{{Reason: "FieldValueNotSupported", Field: "dryRun", Message: fmt.Sprintf(`Unsupported value: %s: supported values: "All"`, quotedList(vals))}})
			}
			o.dryRun = true
		}
	}
	switch o.propagation {
	case "", "Foreground", "Background", "Orphan":
	default:
		return o, invalidOptions("DeleteOptions", []apiserve.StatusCause{{Reason: "FieldValueNotSupported", Field: "propagationPolicy", Message: fmt.Sprintf(`Unsupported value: %q: supported values: "Foreground", "Background", "Orphan", "nil"`, o.propagation)}})
	}
	return o, nil
}

// delete deletes an object and reports whether it is gone; if not, it now
// has a deletionTimestamp and waits for its finalizers.
func (s *Server) delete(r resource, namespace, name string, opts deleteOptions) (*object, bool, error) {
	if !r.Namespaced {
		namespace = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storeLocked(r)
	old, err := st.existing(namespace, name)
	if err != nil {
		return nil, false, err
	}
	if opts.uid != "" && opts.uid != old.uid {
		return nil, false, preconditionFailed(r, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", opts.uid, old.uid))
	}
	if opts.rv != "" && opts.rv != strconv.FormatInt(old.rv, 10) {
		return nil, false, preconditionFailed(r, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%d). The object might have been modified", opts.rv, old.rv))
	}
	return s.deleteLocked(st, old, opts)
}

// deleteLocked deletes old at once, or, when finalizers hold it (including
// the one a Foreground or Orphan propagation adds, which no garbage
// collector here will remove), marks it with a deletionTimestamp.
func (s *Server) deleteLocked(st *store, old *object, opts deleteOptions) (*object, bool, error) {
	if old.deleting {
		return old, false, nil
	}
	add := map[string]string{"Foreground": "foregroundDeletion", "Orphan": "orphan"}[opts.propagation]
	if !old.finalizers && add == "" {
		if opts.dryRun {
			return old, true, nil
		}
		o := withRV(old, s.nextRVLocked())
		s.commitLocked(st, &change{typ: apiserve.Deleted, obj: o, prev: old})
		return o, true, nil
	}
	d, _ := newDraft(old.body)
	d.set("deletionTimestamp", s.now())
	d.set("deletionGracePeriodSeconds", 0)
	if st.res.tracksGeneration() {
		d.set("generation", gjson.Parse(d.meta["generation"]).Int()+1)
	}
	if add != "" {
		var fins []string
		_ = json.Unmarshal([]byte(d.meta["finalizers"]), &fins) // checked when stored
		if !slices.Contains(fins, add) {
			d.set("finalizers", append(fins, add))
		}
	}
	if opts.dryRun {
		o, err := d.object(old.rv, st.res.BuiltIn)
		return o, false, err
	}
	o, err := d.object(s.rv+1, st.res.BuiltIn)
	if err != nil {
		return nil, false, err
	}
	o.owners = old.owners
	s.nextRVLocked()
	s.commitLocked(st, &change{typ: apiserve.Modified, obj: o, prev: old})
	return o, false, nil
}

// deleteCollection deletes the objects of a namespace ("" for all) that
// the filter selects and returns them as they were, with the
// resourceVersion after the deletes.
func (s *Server) deleteCollection(r resource, namespace string, f apiserve.Filter, opts deleteOptions) ([]*object, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storeLocked(r)
	items, _, _ := st.snapshot(scope{namespace: namespace, filter: f}, s.rv, "", 0)
	for _, o := range items {
		if _, _, err := s.deleteLocked(st, o, opts); err != nil {
			return nil, 0, err
		}
	}
	return items, s.rv, nil
}

// returnsDeleted tells the resources whose delete answers with the object,
// as pods and namespaces do on the real server; the others answer a delete
// that removed the object at once with a Success Status.
func (r resource) returnsDeleted() bool {
	return r.Group == "" && (r.Resource == "pods" || r.Resource == "namespaces")
}

func preconditionFailed(r resource, name, why string) *apiserve.Error {
	return &apiserve.Error{
		Code: http.StatusConflict, Reason: "Conflict",
		Message: fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", r.Kind, name, why),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Kind},
	}
}

// writeDeleted answers a delete that removed the object at once.
func writeDeleted(w http.ResponseWriter, st *store, o *object) {
	if st.res.returnsDeleted() {
		writeObject(w, http.StatusOK, st, o)
		return
	}
	type details struct {
		Name  string `json:"name,omitempty"`
		Group string `json:"group,omitempty"`
		Kind  string `json:"kind,omitempty"`
		UID   string `json:"uid,omitempty"`
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(struct {
		Kind       string   `json:"kind"`
		APIVersion string   `json:"apiVersion"`
		Metadata   struct{} `json:"metadata"`
		Status     string   `json:"status"`
		Details    details  `json:"details"`
	}{"Status", "v1", struct{}{}, "Success", details{o.name, st.res.Group, st.res.Resource, o.uid}})
}
