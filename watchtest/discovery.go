package watchtest

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
)

// Discovery is served by the serving core from kube-apiserver 1.37.2's own
// built-in resources, every one of them whether a test registered it or
// not (one it never did is served as an empty resource), and the custom
// resources added (decision 40). Clients use discovery to tell a misspelt
// resource and a namespaced one addressed without a namespace from a
// missing object, and kubectl to resolve names and short names.

func (s *Server) serveDiscovery(w http.ResponseWriter, req *http.Request) bool {
	return apiserve.ServeDiscovery(w, req, s.apiResources())
}

// apiResources lists what discovery shows: the built-in resources, in the
// real server's order, then the custom resources, their groups by name,
// each group's versions in the order they were added and resources by
// name. A custom resource in a built-in group follows that group's own.
func (s *Server) apiResources() []apiserve.APIResource {
	var all []apiserve.APIResource
	rank := map[string]int{}
	s.mu.Lock()
	for _, r := range apiserve.BuiltIn() {
		if s.withheld[id(httpwatch.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource})] {
			continue
		}
		all = append(all, r)
		if _, ok := rank[r.Group]; !ok {
			rank[r.Group] = len(rank)
		}
	}
	var custom []resource
	for _, st := range s.stores {
		if !st.res.BuiltIn {
			custom = append(custom, st.res)
		}
	}
	s.mu.Unlock()
	slices.SortFunc(custom, func(a, b resource) int {
		return cmp.Or(strings.Compare(a.Group, b.Group), strings.Compare(a.Version, b.Version), strings.Compare(a.Resource, b.Resource))
	})
	for _, r := range custom {
		all = append(all, r.apiResource())
	}
	groupRank := func(g string) int {
		if r, ok := rank[g]; ok {
			return r
		}
		return len(rank)
	}
	slices.SortStableFunc(all, func(a, b apiserve.APIResource) int {
		return cmp.Or(cmp.Compare(groupRank(a.Group), groupRank(b.Group)), strings.Compare(a.Group, b.Group))
	})
	return all
}

// apiResource is a custom resource as discovery shows it, as a
// CustomResourceDefinition would make it.
func (r resource) apiResource() apiserve.APIResource {
	a := apiserve.APIResource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced,
		Singular: strings.ToLower(r.Kind), Verbs: []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		ShortNames: r.ShortNames, Categories: r.Categories, Custom: true, SelectableFields: r.SelectableFields}
	if r.Scale.SpecReplicasPath != "" {
		a.Subresources = append(a.Subresources, apiserve.Subresource{Name: "scale", Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: subVerbs})
	}
	if r.Status {
		a.Subresources = append(a.Subresources, apiserve.Subresource{Name: "status", Group: r.Group, Version: r.Version, Kind: r.Kind, Verbs: subVerbs})
	}
	return a
}

// core is r as the serving core knows a resource.
func (r resource) core() apiserve.APIResource {
	if !r.BuiltIn {
		return r.apiResource()
	}
	return apiserve.APIResource{Group: r.Group, Version: r.Version, Resource: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced}
}

var subVerbs = []string{"get", "patch", "update"}
