package watchtest

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// Discovery documents, built from the registered resources in the shapes
// kube-apiserver 1.37 answers with: the aggregated APIGroupDiscoveryList
// (v2; v2beta1, which 1.37 no longer serves, gets the plain documents) for
// /api and /apis, else
// APIVersions, APIGroupList, APIGroup and APIResourceList. Clients use
// them to tell a misspelt resource and a namespaced one addressed without a
// namespace from a missing object, so serving them makes those errors in
// tests what they are in production.

// groupOrder is the order in which kube-apiserver lists its built-in
// groups; other groups follow by name, as custom resource groups do.
var groupOrder = []string{
	"apiregistration.k8s.io", "apps", "events.k8s.io", "authentication.k8s.io",
	"authorization.k8s.io", "autoscaling", "batch", "certificates.k8s.io",
	"networking.k8s.io", "policy", "rbac.authorization.k8s.io", "storage.k8s.io",
	"admissionregistration.k8s.io", "apiextensions.k8s.io", "scheduling.k8s.io",
	"coordination.k8s.io", "node.k8s.io", "discovery.k8s.io", "resource.k8s.io",
	"flowcontrol.apiserver.k8s.io", "storagemigration.k8s.io",
}

func groupRank(g string) int {
	if i := slices.Index(groupOrder, g); i >= 0 {
		return i
	}
	return len(groupOrder)
}

// serveDiscovery answers the discovery paths and reports whether path was
// one.
func (s *Server) serveDiscovery(w http.ResponseWriter, req *http.Request) bool {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if req.Method != http.MethodGet || len(parts) == 0 || len(parts) > 3 ||
		parts[0] != "api" && parts[0] != "apis" || parts[0] == "api" && len(parts) > 2 {
		return false
	}
	rs := s.resources()
	core := parts[0] == "api"
	switch {
	case len(parts) == 1:
		if v := aggregatedVersion(req.Header.Get("Accept")); v != "" {
			writeDiscovery(w, "application/json;g=apidiscovery.k8s.io;v="+v+";as=APIGroupDiscoveryList", aggregated(rs, core, v))
		} else if core {
			writeDiscovery(w, "application/json", map[string]any{"kind": "APIVersions", "versions": coreVersions(rs),
				"serverAddressByClientCIDRs": []any{map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": req.Host}}})
		} else {
			writeDiscovery(w, "application/json", map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": apiGroups(rs)})
		}
	case core:
		return s.serveResourceList(w, rs, "", parts[1])
	case len(parts) == 2:
		for _, g := range apiGroups(rs) {
			if g["name"] == parts[1] {
				g["kind"], g["apiVersion"] = "APIGroup", "v1"
				writeDiscovery(w, "application/json", g)
				return true
			}
		}
		return false
	default:
		return s.serveResourceList(w, rs, parts[1], parts[2])
	}
	return true
}

func (s *Server) serveResourceList(w http.ResponseWriter, rs []resource, group, version string) bool {
	var out []any
	for _, r := range rs {
		if r.Group != group || r.Version != version {
			continue
		}
		out = append(out, legacyEntry(r, r.Resource, r.Kind, r.verbs(), true))
		for _, sub := range r.subresources() {
			e := legacyEntry(r, r.Resource+"/"+sub, r.Kind, subVerbs, false)
			if sub == "scale" {
				e["group"], e["version"], e["kind"] = "autoscaling", "v1", "Scale"
			}
			out = append(out, e)
		}
	}
	if out == nil {
		return false
	}
	gv := version
	doc := map[string]any{"kind": "APIResourceList", "groupVersion": gv, "resources": out}
	if group != "" {
		doc["apiVersion"], doc["groupVersion"] = "v1", group+"/"+version
	}
	writeDiscovery(w, "application/json", doc)
	return true
}

var subVerbs = []string{"get", "patch", "update"}

func legacyEntry(r resource, name, kind string, verbs []string, top bool) map[string]any {
	e := map[string]any{"name": name, "singularName": "", "namespaced": r.Namespaced, "kind": kind, "verbs": verbs}
	if top {
		e["singularName"] = r.singular()
		if len(r.ShortNames) > 0 {
			e["shortNames"] = r.ShortNames
		}
		if len(r.Categories) > 0 {
			e["categories"] = r.Categories
		}
	}
	return e
}

// aggregatedVersion picks the aggregated discovery version an Accept header
// asks for, or "" for the plain documents. Like kube-apiserver 1.37, it
// serves v2 only: a client asking for v2beta1 alone gets the plain ones.
func aggregatedVersion(accept string) string {
	for _, v := range []string{"v2"} {
		for _, part := range strings.Split(accept, ",") {
			p := strings.ReplaceAll(part, " ", "")
			if strings.Contains(p, "g=apidiscovery.k8s.io") && strings.Contains(p, ";v="+v+";") && strings.Contains(p, "as=APIGroupDiscoveryList") {
				return v
			}
		}
	}
	return ""
}

func aggregated(rs []resource, core bool, v string) map[string]any {
	var items []any
	for _, g := range groupsOf(rs, core) {
		var versions []any
		for _, ver := range g.versions {
			var entries []any
			for _, r := range rs {
				if r.Group == g.name && r.Version == ver {
					entries = append(entries, aggregatedEntry(r))
				}
			}
			versions = append(versions, map[string]any{"version": ver, "resources": entries, "freshness": "Current"})
		}
		meta := map[string]any{}
		if !core {
			meta["name"] = g.name
		}
		items = append(items, map[string]any{"metadata": meta, "versions": versions})
	}
	if items == nil {
		items = []any{}
	}
	return map[string]any{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + v, "metadata": map[string]any{}, "items": items}
}

func aggregatedEntry(r resource) map[string]any {
	kind := map[string]any{"group": "", "version": "", "kind": r.Kind}
	if !r.BuiltIn {
		kind["group"], kind["version"] = r.Group, r.Version
	}
	scope := "Cluster"
	if r.Namespaced {
		scope = "Namespaced"
	}
	e := map[string]any{"resource": r.Resource, "responseKind": kind, "scope": scope, "singularResource": r.singular(), "verbs": r.verbs()}
	if len(r.ShortNames) > 0 {
		e["shortNames"] = r.ShortNames
	}
	if len(r.Categories) > 0 {
		e["categories"] = r.Categories
	}
	var subs []any
	for _, sub := range r.subresources() {
		sk := kind
		if sub == "scale" {
			sk = map[string]any{"group": "autoscaling", "version": "v1", "kind": "Scale"}
		}
		subs = append(subs, map[string]any{"subresource": sub, "responseKind": sk, "verbs": subVerbs})
	}
	if subs != nil {
		e["subresources"] = subs
	}
	return e
}

type apiGroup struct {
	name     string
	versions []string
}

// groupsOf lists the core group (core) or the named groups, in the real
// server's order, each with its versions in the order they were added.
func groupsOf(rs []resource, core bool) []apiGroup {
	var out []apiGroup
	for _, r := range rs {
		if (r.Group == "") != core {
			continue
		}
		i := slices.IndexFunc(out, func(g apiGroup) bool { return g.name == r.Group })
		if i < 0 {
			out = append(out, apiGroup{name: r.Group})
			i = len(out) - 1
		}
		if !slices.Contains(out[i].versions, r.Version) {
			out[i].versions = append(out[i].versions, r.Version)
		}
	}
	slices.SortStableFunc(out, func(a, b apiGroup) int {
		if ra, rb := groupRank(a.name), groupRank(b.name); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

func coreVersions(rs []resource) []string {
	var out []string
	for _, g := range groupsOf(rs, true) {
		out = append(out, g.versions...)
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func apiGroups(rs []resource) []map[string]any {
	var out []map[string]any
	for _, g := range groupsOf(rs, false) {
		var vs []any
		for _, v := range g.versions {
			vs = append(vs, map[string]any{"groupVersion": g.name + "/" + v, "version": v})
		}
		out = append(out, map[string]any{"name": g.name, "versions": vs, "preferredVersion": vs[0]})
	}
	if out == nil {
		out = []map[string]any{}
	}
	return out
}

func writeDiscovery(w http.ResponseWriter, ct string, doc any) {
	b, _ := json.Marshal(doc)
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}

// resources returns the registered resources sorted as discovery lists
// them: by group, version and name.
func (s *Server) resources() []resource {
	s.mu.Lock()
	out := make([]resource, 0, len(s.stores))
	for _, st := range s.stores {
		out = append(out, st.res)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b resource) int { return strings.Compare(a.Resource, b.Resource) })
	return out
}

// verbs are the resource's verbs as discovery lists them; namespaces have
// no deletecollection on the real server.
func (r resource) verbs() []string {
	switch {
	case !r.BuiltIn: // in the order the real server lists them for custom resources
		return []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}
	case r.Group == "" && r.Resource == "namespaces":
		return []string{"create", "delete", "get", "list", "patch", "update", "watch"}
	}
	return []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}
}

func (r resource) singular() string { return strings.ToLower(r.Kind) }

// subresources lists the resource's subresources by name.
func (r resource) subresources() []string {
	var out []string
	for _, sub := range []string{"scale", "status"} {
		if r.has(sub) {
			out = append(out, sub)
		}
	}
	return out
}
