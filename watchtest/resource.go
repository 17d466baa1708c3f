package watchtest

import (
	"fmt"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
)

// Definition says how the server serves a resource: what its objects are
// and which subresources, selectable fields and discovery names it has.
// Built-in resources have the real server's definitions already; a custom
// resource gets one with AddResource, as a CustomResourceDefinition gives
// it on a real server.
type Definition struct {
	Kind string // e.g. "Widget"

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

	// PrinterColumns are a custom resource's additionalPrinterColumns,
	// the columns of the Table kubectl get prints; with none it prints
	// NAME and AGE.
	PrinterColumns []apiserve.PrinterColumn
}

// ScalePaths says where an object keeps what its autoscaling/v1 Scale
// shows, as a CustomResourceDefinition's scale subresource does: paths such
// as ".spec.replicas". The label selector may be a string or a
// LabelSelector object (as a Deployment's .spec.selector is).
type ScalePaths struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	LabelSelectorPath  string
}

// The resources every Server serves from the start, addressed in all
// namespaces; a client narrows one with ResourceClient.Namespace.
var (
	Pods        = httpwatch.Resource{Version: "v1", Resource: "pods"}
	ConfigMaps  = httpwatch.Resource{Version: "v1", Resource: "configmaps"}
	Namespaces  = httpwatch.Resource{Version: "v1", Resource: "namespaces"}
	Deployments = httpwatch.Resource{Group: "apps", Version: "v1", Resource: "deployments"}
)

// Built-in resources a Server serves once AddResource was called with
// them (and a zero Definition), or once a Go method was: leases for
// leader election, workloads with status and scale subresources, events,
// secrets.
var (
	Secrets      = httpwatch.Resource{Version: "v1", Resource: "secrets"}
	Leases       = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
	ReplicaSets  = httpwatch.Resource{Group: "apps", Version: "v1", Resource: "replicasets"}
	StatefulSets = httpwatch.Resource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	Events       = httpwatch.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events"}
)

var all = []string{"all"}

var replicaScale = ScalePaths{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".spec.selector"}

// builtIn holds the real server's definitions of the built-in resources
// watchtest knows, by group/version/resource.
var builtIn = map[string]Definition{
	id(Pods):         {Kind: "Pod", Namespaced: true, BuiltIn: true, Status: true, Generation: true, ShortNames: []string{"po"}, Categories: all},
	id(ConfigMaps):   {Kind: "ConfigMap", Namespaced: true, BuiltIn: true, ShortNames: []string{"cm"}},
	id(Namespaces):   {Kind: "Namespace", BuiltIn: true, Status: true, ShortNames: []string{"ns"}},
	id(Deployments):  {Kind: "Deployment", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"deploy"}, Categories: all},
	id(ReplicaSets):  {Kind: "ReplicaSet", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"rs"}, Categories: all},
	id(StatefulSets): {Kind: "StatefulSet", Namespaced: true, BuiltIn: true, Status: true, Scale: replicaScale, Generation: true, ShortNames: []string{"sts"}, Categories: all},
	id(Leases):       {Kind: "Lease", Namespaced: true, BuiltIn: true},
	id(Events):       {Kind: "Event", Namespaced: true, BuiltIn: true},
	id(Secrets):      {Kind: "Secret", Namespaced: true, BuiltIn: true},
}

// id keys a resource by group, version and resource; the namespace of an
// address is no part of what is served.
func id(r httpwatch.Resource) string { return r.Group + "/" + r.Version + "/" + r.Resource }

// resource is a served resource: its address and its definition.
type resource struct {
	Group, Version, Resource string
	Definition
}

// definedAs is r served as d, or as its built-in definition when d is the
// zero Definition.
func definedAs(r httpwatch.Resource, d Definition) (resource, error) {
	if d.Kind == "" {
		b, ok := builtIn[id(r)]
		if !ok {
			b, ok = catalogued(r)
		}
		if !ok {
			return resource{}, fmt.Errorf("watchtest: %s is no built-in resource watchtest knows: give its Definition (at least Kind) to AddResource", r)
		}
		d = b
	}
	return resource{Group: r.Group, Version: r.Version, Resource: r.Resource, Definition: d}, nil
}

// catalogued is the definition of a built-in resource watchtest has no
// definition of its own for, from the real server's discovery: served
// as any built-in, with its status subresource and, if it has one, a
// scale subresource on .spec.replicas.
func catalogued(r httpwatch.Resource) (Definition, bool) {
	a, ok := apiserve.BuiltInResource(r.Group, r.Version, r.Resource)
	if !ok {
		return Definition{}, false
	}
	d := Definition{Kind: a.Kind, Namespaced: a.Namespaced, BuiltIn: true, Status: a.Has("status"),
		ShortNames: a.ShortNames, Categories: a.Categories}
	if a.Has("scale") {
		d.Scale = replicaScale
	}
	return d, true
}

// tracksGeneration reports whether r's objects carry metadata.generation.
func (r resource) tracksGeneration() bool { return r.Generation || !r.BuiltIn }

// address is r as a client names it, in all namespaces.
func (r resource) address() httpwatch.Resource {
	return httpwatch.Resource{Group: r.Group, Version: r.Version, Resource: r.Resource}
}

// String returns the resource as kubectl qualifies it: "pods.v1",
// "deployments.v1.apps".
func (r resource) String() string { return r.address().String() }

// apiVersion returns "v1" for the core group, "GROUP/VERSION" otherwise.
func (r resource) apiVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// qualified is how the server names the resource in messages: "pods",
// "widgets.example.com".
func (r resource) qualified() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

func (r resource) id() string { return id(r.address()) }
