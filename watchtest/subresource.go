package watchtest

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"
)

// has tells whether the resource serves a subresource.
func (r resource) has(sub string) bool {
	switch sub {
	case "status":
		return r.Status
	case "scale":
		return r.Scale.SpecReplicasPath != ""
	}
	return false
}

// guardStatus applies the split a status subresource makes, as the real
// server's status strategies do. A write to /status changes .status, and
// for a built-in resource its metadata too, except the labels of an apps
// resource (a Deployment's status write keeps its labels, a Pod's does
// not); a custom resource's keeps all but .status. Any other write leaves
// .status as it was.
func (r resource) guardStatus(prev, d *draft, sub string) *draft {
	if !r.Status {
		return d
	}
	if sub == "status" {
		next := &draft{top: maps.Clone(prev.top), meta: maps.Clone(prev.meta)}
		if r.BuiltIn {
			next.meta = d.meta
			if r.Group == "apps" {
				setOrDelete(next.meta, "labels", prev.meta)
			}
		}
		setOrDelete(next.top, "status", d.top)
		return next
	}
	setOrDelete(d.top, "status", prev.top)
	return d
}

// setOrDelete makes dst[key] what src has there, or absent.
func setOrDelete(dst map[string]string, key string, src map[string]string) {
	if v, ok := src[key]; ok {
		dst[key] = v
	} else {
		delete(dst, key)
	}
}

// scale is an autoscaling/v1 Scale, fields in the real server's order.
type scale struct {
	Kind       string    `json:"kind"`
	APIVersion string    `json:"apiVersion"`
	Metadata   scaleMeta `json:"metadata"`
	Spec       struct {
		Replicas int64 `json:"replicas,omitempty"`
	} `json:"spec"`
	Status struct {
		Replicas int64  `json:"replicas"`
		Selector string `json:"selector,omitempty"`
	} `json:"status"`
}

type scaleMeta struct {
	Name              string `json:"name"`
	Namespace         string `json:"namespace,omitempty"`
	UID               string `json:"uid"`
	ResourceVersion   string `json:"resourceVersion"`
	CreationTimestamp string `json:"creationTimestamp"`
}

// gjsonPath turns ".spec.replicas" into gjson's "spec.replicas".
func gjsonPath(p string) string { return strings.TrimPrefix(p, ".") }

func scaleOf(r resource, o *object) scale {
	sc := scale{Kind: "Scale", APIVersion: "autoscaling/v1", Metadata: scaleMeta{
		Name: o.name, Namespace: o.namespace, UID: o.uid, ResourceVersion: strconv.FormatInt(o.rv, 10),
		CreationTimestamp: gjson.GetBytes(o.body, "metadata.creationTimestamp").String(),
	}}
	sc.Spec.Replicas = gjson.GetBytes(o.body, gjsonPath(r.Scale.SpecReplicasPath)).Int()
	if p := r.Scale.StatusReplicasPath; p != "" {
		sc.Status.Replicas = gjson.GetBytes(o.body, gjsonPath(p)).Int()
	}
	if p := r.Scale.LabelSelectorPath; p != "" {
		sc.Status.Selector = selectorString(gjson.GetBytes(o.body, gjsonPath(p)))
	}
	return sc
}

// selectorString writes a label selector as a string; a LabelSelector
// object is converted the way the real server does for a Deployment.
func selectorString(v gjson.Result) string {
	if !v.IsObject() {
		return v.String()
	}
	reqs := map[string]string{}
	v.Get("matchLabels").ForEach(func(k, val gjson.Result) bool {
		reqs[k.String()] = k.String() + "=" + val.String()
		return true
	})
	for _, e := range v.Get("matchExpressions").Array() {
		key := e.Get("key").String()
		var vals []string
		for _, x := range e.Get("values").Array() {
			vals = append(vals, x.String())
		}
		slices.Sort(vals)
		switch e.Get("operator").String() {
		case "In":
			reqs[key+" in"] = key + " in (" + strings.Join(vals, ",") + ")"
		case "NotIn":
			reqs[key+" notin"] = key + " notin (" + strings.Join(vals, ",") + ")"
		case "Exists":
			reqs[key] = key
		case "DoesNotExist":
			reqs[key] = "!" + key
		}
	}
	out := make([]string, 0, len(reqs))
	for _, k := range slices.Sorted(maps.Keys(reqs)) {
		out = append(out, reqs[k])
	}
	return strings.Join(out, ",")
}

func writeScale(w http.ResponseWriter, code int, r resource, o *object) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(scaleOf(r, o))
}

// scaleDoc is the Scale of o decoded, for a patch to work on.
func scaleDoc(r resource, o *object) any {
	b, _ := json.Marshal(scaleOf(r, o)) // plain struct, always encodes
	v, _ := decodeJSON(b)
	return v
}

// setScaleLocked writes the replicas of a Scale (as sent to PUT, or as
// patched) into old. A metadata.resourceVersion in the Scale is a
// precondition.
func (s *Server) setScaleLocked(st *store, old *object, sc any, opts writeOptions) (*object, error) {
	r := st.res
	b, err := encodeJSON(sc)
	if err != nil {
		return nil, badRequest("%v", err)
	}
	in := gjson.ParseBytes(b)
	if !in.IsObject() {
		return nil, badRequest("the Scale is not a JSON object: %s", truncate(b))
	}
	if rv := in.Get("metadata.resourceVersion").String(); rv != "" && rv != strconv.FormatInt(old.rv, 10) {
		return nil, conflict(r, old.name)
	}
	if n := in.Get("metadata.name").String(); n != "" && n != old.name {
		return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", n, old.name)
	}
	replicas := in.Get("spec.replicas")
	if replicas.Exists() && (replicas.Type != gjson.Number || replicas.Int() < 0 || float64(replicas.Int()) != replicas.Num) {
		return nil, invalidObject(r, old.name, "spec.replicas", "Invalid value: "+replicas.Raw+": must be a non-negative integer")
	}
	doc, err := decodeJSON(old.body)
	if err != nil {
		return nil, err
	}
	path := strings.Split(gjsonPath(r.Scale.SpecReplicasPath), ".")
	for i := range path[:len(path)-1] {
		if _, ok := pointerGet(doc, path[:i+1]); !ok {
			doc, _ = pointerSet(doc, path[:i+1], map[string]any{}, true)
		}
	}
	if doc, err = pointerSet(doc, path, json.Number(strconv.FormatInt(replicas.Int(), 10)), true); err != nil {
		return nil, badRequest("cannot set %s: the object has no object there", r.Scale.SpecReplicasPath)
	}
	body, err := encodeJSON(doc)
	if err != nil {
		return nil, err
	}
	d, err := newDraft(body)
	if err != nil {
		return nil, err
	}
	return s.replaceLocked(st, old, d, opts)
}
