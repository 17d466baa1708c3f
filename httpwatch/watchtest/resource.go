package watchtest

import "net/url"

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
}

// The core resources every Server has from the start.
var (
	Pods       = Resource{Version: "v1", Resource: "pods", Kind: "Pod", Namespaced: true, BuiltIn: true}
	ConfigMaps = Resource{Version: "v1", Resource: "configmaps", Kind: "ConfigMap", Namespaced: true, BuiltIn: true}
	Namespaces = Resource{Version: "v1", Resource: "namespaces", Kind: "Namespace", BuiltIn: true}
)

// Leases is coordination.k8s.io/v1 Lease, for leader election tests. A
// Server has it once AddResource(Leases) was called.
var Leases = Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Kind: "Lease", Namespaced: true, BuiltIn: true}

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
