package watchtest

import (
	"net/url"

	"github.com/listwatch/listwatch/httpwatch"
)

// Resource names one kind of object the server holds, as the API addresses
// it: /api/v1/... for the core group, /apis/GROUP/VERSION/... otherwise.
type Resource struct {
	Group    string // "" for the core group
	Version  string // e.g. "v1"
	Resource string // the plural in URLs, e.g. "pods"
	Kind     string // e.g. "Pod"

	// Namespaced resources live under /namespaces/NS/; the others are
	// cluster-scoped.
	Namespaced bool

	// BuiltIn marks a resource compiled into the real API server. Its list
	// items then carry no kind and apiVersion, as the real server sends
	// them; custom resources carry both on every item.
	BuiltIn bool

	// Status gives the resource a status subresource: /status reads and
	// writes only .status, and writes to the object itself leave .status
	// as it was (a create drops it).
	Status bool

	// Scale, when its SpecReplicasPath is set, gives the resource a scale
	// subresource serving autoscaling/v1 Scale.
	Scale ScalePaths

	// Generation gives a built-in resource's objects a
	// metadata.generation counting changes to what they ask for, as the
	// real server does for pods and workloads but not for configmaps,
	// secrets, services, leases or namespaces. Custom resources always
	// have one.
	Generation bool

	// ShortNames and Categories are what discovery lists for the
	// resource, as kubectl reads them ("po"; "all").
	ShortNames []string
	Categories []string

	// SelectableFields are the field paths, beyond metadata.name and
	// metadata.namespace, that field selectors may name on a custom
	// resource, as a CustomResourceDefinition's selectableFields declare
	// them ("spec.color"). Built-in resources have the real server's own.
	SelectableFields []string
}

// tracksGeneration reports whether r's objects carry metadata.generation.
func (r Resource) tracksGeneration() bool { return r.Generation || !r.BuiltIn }

// ScalePaths says where an object keeps what its autoscaling/v1 Scale
// shows, as a CustomResourceDefinition's scale subresource does: paths such
// as ".spec.replicas". The label selector may be a string or a
// LabelSelector object (as a Deployment's .spec.selector is).
type ScalePaths struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  string
}

// The resources every Server has from the start.
var (
	Pods        = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, BuiltIn: true, Status: true, Generation: true, ShortNames: []string{"po"}, Categories: all}
	ConfigMaps  = Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, BuiltIn: true, ShortNames: []string{"cm"}}
	Namespaces  = Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace", BuiltIn: true, Status: true, ShortNames: []string{"ns"}}
	Deployments = Resource{Group: "apps", Version: "v1", Resource: "deployments", Kind: "Deployment", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"deploy"}, Categories: all}
)

// ReplicaSets and StatefulSets, with their status and scale subresources,
// are there once AddResource was called with them.
var (
	ReplicaSets  = Resource{Group: "apps", Version: "v1", Resource: "replicasets", Kind: "ReplicaSet", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"rs"}, Categories: all}
	StatefulSets = Resource{Group: "apps", Version: "v1", Resource: "statefulsets", Kind: "StatefulSet", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"sts"}, Categories: all}
)

var all = []string{"all"}

var replicaScale = ScalePaths{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".spec.selector"}

// Leases is coordination.k8s.io/v1 Lease, for leader election tests. A
// Server has it once AddResource(Leases) was called.
var Leases = Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true, BuiltIn: true}

// In returns the httpwatch.Resource that addresses r in namespace ("" for
// all namespaces, or a cluster-scoped resource), for a client of the
// server:
//
//	c.Resource(watchtest.Pods.In("prod"))
func (r Resource) In(namespace string) httpwatch.Resource {
	if !r.Namespaced {
		namespace = ""
	}
	return httpwatch.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Namespace: namespace}
}

// String returns the resource as kubectl qualifies it: "pods.v1",
// "deployments.v1.apps".
func (r Resource) String() string { return r.In("").String() }

// APIVersion returns "v1" for the core group, "GROUP/VERSION" otherwise.
func (r Resource) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Path returns the URL path of the collection (name "") or of one object.
// namespace "" on a namespaced resource addresses all namespaces.
func (r Resource) Path(namespace, name string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if r.Namespaced && namespace != "" {
		p += "/namespaces/" + url.PathEscape(namespace)
	}
	p += "/" + r.Resource
	if name != "" {
		p += "/" + url.PathEscape(name)
	}
	return p
}

// qualified is how the server names the resource in messages: "pods",
// "widgets.example.com".
func (r Resource) qualified() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

func (r Resource) id() string { return r.Group + "/" + r.Version + "/" + r.Resource }
