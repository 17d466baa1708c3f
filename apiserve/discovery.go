package apiserve

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

// APIResource is one resource as discovery describes it.
type APIResource struct {
	Group, Version, Resource string
	Kind                     string
	Namespaced               bool
	Singular                 string
	Verbs                    []string
	ShortNames, Categories   []string
	Subresources             []Subresource
	// Custom marks a resource a CustomResourceDefinition would serve:
	// discovery names its kind's group and version, as the real server
	// does for those and not for built-ins.
	Custom bool
	// SelectableFields are the field paths, beyond metadata.name and
	// metadata.namespace, that field selectors may name on a custom
	// resource; built-in resources have the real server's own.
	SelectableFields []string
}

// Subresource is one subresource of an APIResource; Group and Version are
// set when its kind belongs to another group version (a Scale's is
// autoscaling/v1).
type Subresource struct {
	Name           string
	Group, Version string
	Kind           string
	Verbs          []string
}

// Has reports whether r has the subresource named sub.
func (r APIResource) Has(sub string) bool {
	return slices.ContainsFunc(r.Subresources, func(s Subresource) bool { return s.Name == sub })
}

// The aggregated discovery documents of kube-apiserver 1.37.2 (recorded
// with scripts/realapi.sh): the built-in resources, in the real order.
var (
	//go:embed discovery-api.json
	coreDiscovery []byte
	//go:embed discovery-apis.json
	groupsDiscovery []byte
)

type aggregatedDoc struct {
	Items []struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Versions []struct {
			Version   string `json:"version"`
			Resources []struct {
				Resource     string   `json:"resource"`
				ResponseKind kindRef  `json:"responseKind"`
				Scope        string   `json:"scope"`
				Singular     string   `json:"singularResource"`
				Verbs        []string `json:"verbs"`
				ShortNames   []string `json:"shortNames"`
				Categories   []string `json:"categories"`
				Subresources []struct {
					Subresource  string   `json:"subresource"`
					ResponseKind kindRef  `json:"responseKind"`
					Verbs        []string `json:"verbs"`
				} `json:"subresources"`
			} `json:"resources"`
		} `json:"versions"`
	} `json:"items"`
}

type kindRef struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

var builtIn = func() []APIResource {
	var out []APIResource
	for _, raw := range [][]byte{coreDiscovery, groupsDiscovery} {
		var doc aggregatedDoc
		if err := json.Unmarshal(raw, &doc); err != nil {
			panic("apiserve: recorded discovery: " + err.Error())
		}
		for _, g := range doc.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					a := APIResource{Group: g.Metadata.Name, Version: v.Version, Resource: r.Resource, Kind: r.ResponseKind.Kind,
						Namespaced: r.Scope == "Namespaced", Singular: r.Singular, Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories}
					for _, s := range r.Subresources {
						a.Subresources = append(a.Subresources, Subresource{Name: s.Subresource, Group: s.ResponseKind.Group,
							Version: s.ResponseKind.Version, Kind: s.ResponseKind.Kind, Verbs: s.Verbs})
					}
					out = append(out, a)
				}
			}
		}
	}
	return out
}()

// BuiltIn returns the resources kube-apiserver 1.37.2 serves without any
// CustomResourceDefinition, in the order its discovery lists them: groups
// in the server's order, each group's versions preferred first, each
// version's resources by name.
func BuiltIn() []APIResource { return slices.Clone(builtIn) }

// BuiltInResource returns the built-in resource group/version/resource.
func BuiltInResource(group, version, resource string) (APIResource, bool) {
	i := slices.IndexFunc(builtIn, func(r APIResource) bool {
		return r.Group == group && r.Version == version && r.Resource == resource
	})
	if i < 0 {
		return APIResource{}, false
	}
	return builtIn[i], true
}

// ServeDiscovery answers the discovery paths for the resources rs, in
// the shapes kube-apiserver 1.37 answers with: the aggregated
// APIGroupDiscoveryList (v2) for /api and /apis when asked for, else
// APIVersions, APIGroupList, APIGroup and each group version's
// APIResourceList. Groups are listed in the order of their first
// resource in rs. It reports whether the request was one for discovery.
func ServeDiscovery(w http.ResponseWriter, req *http.Request, rs []APIResource) bool {
	parts := strings.Split(strings.Trim(req.URL.Path, "/"), "/")
	if req.Method != http.MethodGet || len(parts) == 0 || len(parts) > 3 ||
		parts[0] != "api" && parts[0] != "apis" || parts[0] == "api" && len(parts) > 2 {
		return false
	}
	core := parts[0] == "api"
	switch {
	case len(parts) == 1:
		if v := aggregatedVersion(req.Header.Get("Accept")); v != "" {
			writeJSON(w, "application/json;g=apidiscovery.k8s.io;v="+v+";as=APIGroupDiscoveryList", aggregated(rs, core, v))
		} else if core {
			writeJSON(w, "application/json", map[string]any{"kind": "APIVersions", "versions": coreVersions(rs),
				"serverAddressByClientCIDRs": []any{map[string]any{"clientCIDR": "0.0.0.0/0", "serverAddress": req.Host}}})
		} else {
			writeJSON(w, "application/json", map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": apiGroups(rs)})
		}
	case core:
		return serveResourceList(w, rs, "", parts[1])
	case len(parts) == 2:
		for _, g := range apiGroups(rs) {
			if g["name"] == parts[1] {
				g["kind"], g["apiVersion"] = "APIGroup", "v1"
				writeJSON(w, "application/json", g)
				return true
			}
		}
		return false
	default:
		return serveResourceList(w, rs, parts[1], parts[2])
	}
	return true
}

func serveResourceList(w http.ResponseWriter, rs []APIResource, group, version string) bool {
	var out []any
	for _, r := range rs {
		if r.Group != group || r.Version != version {
			continue
		}
		out = append(out, legacyEntry(r))
		for _, sub := range r.Subresources {
			e := map[string]any{"name": r.Resource + "/" + sub.Name, "singularName": "", "namespaced": r.Namespaced}
			if (sub.Group != "" || sub.Version != "") && (sub.Group != r.Group || sub.Version != r.Version) {
				e["group"], e["version"] = sub.Group, sub.Version
			}
			e["kind"], e["verbs"] = sub.Kind, sub.Verbs
			out = append(out, e)
		}
	}
	if out == nil {
		return false
	}
	doc := map[string]any{"kind": "APIResourceList", "groupVersion": version, "resources": out}
	if group != "" {
		doc["apiVersion"], doc["groupVersion"] = "v1", group+"/"+version
	}
	writeJSON(w, "application/json", doc)
	return true
}

func legacyEntry(r APIResource) map[string]any {
	e := map[string]any{"name": r.Resource, "singularName": r.Singular, "namespaced": r.Namespaced, "kind": r.Kind, "verbs": r.Verbs}
	if len(r.ShortNames) > 0 {
		e["shortNames"] = r.ShortNames
	}
	if len(r.Categories) > 0 {
		e["categories"] = r.Categories
	}
	return e
}

// aggregatedVersion picks the aggregated discovery version an Accept header
// asks for, or "" for the plain documents. Like kube-apiserver 1.37, it
// serves v2 only: a client asking for v2beta1 alone gets the plain ones.
func aggregatedVersion(accept string) string {
	for part := range strings.SplitSeq(accept, ",") {
		p := strings.ReplaceAll(part, " ", "")
		if strings.Contains(p, "g=apidiscovery.k8s.io") && strings.Contains(p, ";v=v2;") && strings.Contains(p, "as=APIGroupDiscoveryList") {
			return "v2"
		}
	}
	return ""
}

func aggregated(rs []APIResource, core bool, v string) map[string]any {
	items := []any{}
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
	return map[string]any{"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + v, "metadata": map[string]any{}, "items": items}
}

func aggregatedEntry(r APIResource) map[string]any {
	kind := map[string]any{"group": "", "version": "", "kind": r.Kind}
	if r.Custom {
		kind["group"], kind["version"] = r.Group, r.Version
	}
	scope := "Cluster"
	if r.Namespaced {
		scope = "Namespaced"
	}
	e := map[string]any{"resource": r.Resource, "responseKind": kind, "scope": scope, "singularResource": r.Singular, "verbs": r.Verbs}
	if len(r.ShortNames) > 0 {
		e["shortNames"] = r.ShortNames
	}
	if len(r.Categories) > 0 {
		e["categories"] = r.Categories
	}
	var subs []any
	for _, sub := range r.Subresources {
		sk := map[string]any{"group": sub.Group, "version": sub.Version, "kind": sub.Kind}
		subs = append(subs, map[string]any{"subresource": sub.Name, "responseKind": sk, "verbs": sub.Verbs})
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

// groupsOf lists the core group (core) or the named groups, in the order
// of their first resource, each with its versions in that order too.
func groupsOf(rs []APIResource, core bool) []apiGroup {
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
	return out
}

func coreVersions(rs []APIResource) []string {
	out := []string{}
	for _, g := range groupsOf(rs, true) {
		out = append(out, g.versions...)
	}
	return out
}

func apiGroups(rs []APIResource) []map[string]any {
	out := []map[string]any{}
	for _, g := range groupsOf(rs, false) {
		var vs []any
		for _, v := range g.versions {
			vs = append(vs, map[string]any{"groupVersion": g.name + "/" + v, "version": v})
		}
		out = append(out, map[string]any{"name": g.name, "versions": vs, "preferredVersion": vs[0]})
	}
	return out
}

func writeJSON(w http.ResponseWriter, ct string, doc any) {
	b, _ := json.Marshal(doc) // maps of strings, bools and lists
	w.Header().Set("Content-Type", ct)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(b, '\n'))
}
