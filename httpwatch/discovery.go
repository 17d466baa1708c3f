package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// APIResource is one resource as the server's discovery describes it.
type APIResource struct {
	Resource // Group, Version and Resource; Namespace is always ""
	// Kind is the kind of the objects, e.g. "Deployment".
	Kind string
	// Namespaced resources live in namespaces; the others are
	// cluster-scoped.
	Namespaced bool
	Singular   string
	ShortNames []string
	Verbs      []string
	// Subresources names the resource's subresources, e.g. "status",
	// "scale".
	Subresources []string
	// Preferred is set on the version the server prefers for the group.
	Preferred bool
}

// ErrUnknownResource is wrapped by ResourceFor when the server serves no
// resource of the name given.
var ErrUnknownResource = errors.New("the server has no such resource")

// Discovery accept headers: the aggregated form lists every group's
// resources in one response (servers since 1.30); the plain form is the
// fallback, which then takes one request per group version.
const acceptAggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"

// discovery caches what the server serves.
type discovery struct {
	mu        sync.Mutex
	resources []APIResource // nil until read
	// absent: the server serves no discovery (404), so scope checks are
	// skipped rather than asked again on every request.
	absent bool
}

// ErrNamespaceRequired is wrapped by a read or write of a namespaced
// resource's objects with no namespace (neither the client's nor, for
// writes of a whole object, the object's): the server would answer a Get
// or Delete with 404, which IsNotFound would take for "already gone".
var ErrNamespaceRequired = errors.New("the resource is namespaced: a namespace is required")

// checkScope fails with ErrNamespaceRequired when r, addressed without a
// namespace, is namespaced according to discovery. Without discovery it
// cannot tell, and lets the request go.
func (c *Client) checkScope(ctx context.Context, r Resource) error {
	if r.Namespace != "" {
		return nil
	}
	c.discovery.mu.Lock()
	absent := c.discovery.absent
	c.discovery.mu.Unlock()
	if absent {
		return nil
	}
	rs, err := c.Discover(ctx)
	if err != nil {
		if IsNotFound(err) {
			c.discovery.mu.Lock()
			c.discovery.absent = true
			c.discovery.mu.Unlock()
		}
		return nil
	}
	for _, ar := range rs {
		if ar.Group == r.Group && ar.Version == r.Version && ar.Resource.Resource == r.Resource && ar.Namespaced {
			return fmt.Errorf("%s.%s: %w", r.Resource, r.Version, ErrNamespaceRequired)
		}
	}
	return nil
}

// Discover reads the resources the server serves, every version of every
// group, core group first, then the groups in the server's order of
// priority, each group's preferred version first. The answer is cached;
// ResourceFor reads the server again when a name is not found.
func (c *Client) Discover(ctx context.Context) ([]APIResource, error) {
	c.discovery.mu.Lock()
	defer c.discovery.mu.Unlock()
	if c.discovery.resources == nil {
		rs, err := c.discover(ctx)
		if err != nil {
			return nil, err
		}
		c.discovery.resources = rs
	}
	return c.discovery.resources, nil
}

// ResourceFor resolves a resource name as kubectl does: a plural, singular
// or short name, or a kind ("pods", "pod", "po", "Pod"), optionally
// qualified by group ("deployments.apps", "deploy.apps") or by version and
// group ("deployments.v1.apps"). Without a version it picks the preferred
// version; when several groups have the name, the core group wins, then the
// group the server ranks first. Subresources are not resolved.
func (c *Client) ResourceFor(ctx context.Context, name string) (APIResource, error) {
	if name == "" {
		return APIResource{}, fmt.Errorf("resource %q: %w", name, ErrUnknownResource)
	}
	rs, err := c.Discover(ctx)
	if err != nil {
		return APIResource{}, err
	}
	if r, ok := resolve(rs, name); ok {
		return r, nil
	}
	// The resource may be new (a CRD installed since): read once more.
	c.discovery.mu.Lock()
	c.discovery.resources = nil
	c.discovery.mu.Unlock()
	if rs, err = c.Discover(ctx); err != nil {
		return APIResource{}, err
	}
	if r, ok := resolve(rs, name); ok {
		return r, nil
	}
	return APIResource{}, fmt.Errorf("resource %q: %w", name, ErrUnknownResource)
}

// resolve finds name in rs; see ResourceFor.
func resolve(rs []APIResource, name string) (APIResource, bool) {
	first, rest, qualified := strings.Cut(name, ".")
	for _, r := range rs {
		if !r.named(first) {
			continue
		}
		switch {
		case !qualified && r.Preferred,
			qualified && r.Preferred && rest == r.Group,
			qualified && rest == r.Version+"."+r.Group:
			return r, true
		}
	}
	// A core resource qualified by version alone: "pods.v1".
	for _, r := range rs {
		if qualified && r.Group == "" && r.named(first) && rest == r.Version {
			return r, true
		}
	}
	return APIResource{}, false
}

func (r APIResource) named(n string) bool {
	if n == r.Resource.Resource || n == r.Singular || strings.EqualFold(n, r.Kind) {
		return true
	}
	for _, s := range r.ShortNames {
		if n == s {
			return true
		}
	}
	return false
}

func (c *Client) discover(ctx context.Context) ([]APIResource, error) {
	var all []APIResource
	for _, root := range []string{"/api", "/apis"} {
		body, err := c.discoveryGet(ctx, root, acceptAggregated)
		if err != nil {
			return nil, err
		}
		doc := gjson.ParseBytes(body)
		var rs []APIResource
		switch kind := doc.Get("kind").String(); kind {
		case "APIGroupDiscoveryList":
			rs = aggregated(doc)
		case "APIVersions", "APIGroupList":
			rs, err = c.legacy(ctx, root, doc)
		default:
			err = fmt.Errorf("discovery %s: unexpected kind %q", root, kind)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, rs...)
	}
	return all, nil
}

// aggregated reads an APIGroupDiscoveryList: groups in priority order, each
// with its versions, preferred first.
func aggregated(doc gjson.Result) []APIResource {
	var out []APIResource
	for _, g := range doc.Get("items").Array() {
		group := g.Get("metadata.name").String()
		for i, v := range g.Get("versions").Array() {
			for _, r := range v.Get("resources").Array() {
				ar := APIResource{
					Resource:   Resource{Group: group, Version: v.Get("version").String(), Resource: r.Get("resource").String()},
					Kind:       r.Get("responseKind.kind").String(),
					Namespaced: r.Get("scope").String() == "Namespaced",
					Singular:   r.Get("singularResource").String(),
					ShortNames: stringsOf(r.Get("shortNames")),
					Verbs:      stringsOf(r.Get("verbs")),
					Preferred:  i == 0,
				}
				for _, s := range r.Get("subresources").Array() {
					ar.Subresources = append(ar.Subresources, s.Get("subresource").String())
				}
				out = append(out, ar)
			}
		}
	}
	return out
}

// legacy reads the unaggregated form: /api lists core versions and /apis
// the groups, and each group version's resources take a request of their
// own.
func (c *Client) legacy(ctx context.Context, root string, doc gjson.Result) ([]APIResource, error) {
	type gv struct {
		group, version string
		preferred      bool
	}
	var gvs []gv
	if root == "/api" {
		for i, v := range doc.Get("versions").Array() {
			gvs = append(gvs, gv{version: v.String(), preferred: i == 0})
		}
	} else {
		for _, g := range doc.Get("groups").Array() {
			pref := g.Get("preferredVersion.version").String()
			for _, v := range g.Get("versions").Array() {
				gvs = append(gvs, gv{g.Get("name").String(), v.Get("version").String(), v.Get("version").String() == pref})
			}
		}
	}
	var out []APIResource
	for _, v := range gvs {
		path := "/api/" + v.version
		if v.group != "" {
			path = "/apis/" + v.group + "/" + v.version
		}
		body, err := c.discoveryGet(ctx, path, acceptJSON)
		if err != nil {
			return nil, err
		}
		out = append(out, resourceList(gjson.ParseBytes(body), v.group, v.version, v.preferred)...)
	}
	return out, nil
}

// resourceList reads an APIResourceList, where subresources are entries of
// their own named "RESOURCE/SUB".
func resourceList(doc gjson.Result, group, version string, preferred bool) []APIResource {
	var out []APIResource
	index := map[string]int{}
	for _, r := range doc.Get("resources").Array() {
		name := r.Get("name").String()
		if parent, sub, ok := strings.Cut(name, "/"); ok {
			if i, found := index[parent]; found {
				out[i].Subresources = append(out[i].Subresources, sub)
			}
			continue
		}
		index[name] = len(out)
		out = append(out, APIResource{
			Resource:   Resource{Group: group, Version: version, Resource: name},
			Kind:       r.Get("kind").String(),
			Namespaced: r.Get("namespaced").Bool(),
			Singular:   r.Get("singularName").String(),
			ShortNames: stringsOf(r.Get("shortNames")),
			Verbs:      stringsOf(r.Get("verbs")),
			Preferred:  preferred,
		})
	}
	return out
}

func stringsOf(a gjson.Result) []string {
	var out []string
	for _, v := range a.Array() {
		out = append(out, v.String())
	}
	return out
}

// discoveryGet reads one discovery document.
func (c *Client) discoveryGet(ctx context.Context, path, accept string) ([]byte, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, path: path, accept: accept})
	if err != nil {
		return nil, fmt.Errorf("discovery: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscovery+1))
	if err != nil {
		return nil, fmt.Errorf("discovery: GET %s: %w", path, err)
	}
	if len(body) > maxDiscovery {
		return nil, &DecodeError{Verb: http.MethodGet, Path: path, Offset: maxDiscovery, Err: ErrFrameTooLarge}
	}
	if err := validJSON(body); err != nil {
		return nil, &DecodeError{Verb: http.MethodGet, Path: path, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	return body, nil
}

// maxDiscovery bounds one discovery document: a large cluster's aggregated
// list is a few hundred kilobytes.
const maxDiscovery = 32 << 20
