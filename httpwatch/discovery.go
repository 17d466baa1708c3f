package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
// resource of the name given, and by the error of every request (list,
// watch, get, write) on a resource the server does not serve: its 404 then
// means a misspelt name or a group version the server lacks, not an object
// that is gone, so IsNotFound does not accept it. The message suggests the
// likeliest name when discovery knows one ("did you mean configmaps?").
// IsPermanent accepts it.
var ErrUnknownResource = errors.New("the server has no such resource")

// ErrNamespaceRequired is wrapped by a read or write of a namespaced
// resource's objects with no namespace (neither the client's nor, for
// writes of a whole object, the object's): the server would answer a Get
// or Delete with 404, which IsNotFound would take for "already gone".
var ErrNamespaceRequired = errors.New("the resource is namespaced: a namespace is required")

// checkScope fails with ErrNamespaceRequired when r, addressed without a
// namespace, is namespaced according to discovery. When discovery cannot
// tell (the server has none, or r's group version failed to answer) it
// lets the request go; so it does for a resource discovery does not list,
// whose request then fails with the server's 404, explained (explain).
func (c *Client) checkScope(ctx context.Context, r Resource) error {
	if r.Namespace != "" {
		return nil
	}
	if v, ar, _ := c.judge(ctx, r); v == served && ar.Namespaced {
		return fmt.Errorf("%s: %w", r, ErrNamespaceRequired)
	}
	return nil
}

// Discover reads the resources the server serves, every version of every
// group, core group first, then the groups in the server's order of
// priority, each group's preferred version first. It understands
// aggregated discovery (v2, and v2beta1 of servers 1.26 to 1.29) and the
// plain form (one document per group version).
//
// What answered is kept: when some group versions could not be read (an
// aggregated API that is down answers 503), Discover returns the others
// and an error naming those that failed. Those are read again, a few
// seconds apart at first and at most every two minutes later, by the next
// call that needs them; nothing runs in the background.
func (c *Client) Discover(ctx context.Context) ([]APIResource, error) {
	return c.discoverAll(ctx, false)
}

// discoverAll is Discover; with misses, documents read a while ago are
// read again too, for a name not found in them.
func (c *Client) discoverAll(ctx context.Context, misses bool) ([]APIResource, error) {
	if err := c.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	d := &c.discovery
	d.mu.Lock()
	if d.absent {
		d.mu.Unlock()
		return nil, fmt.Errorf("discovery: %w", errNoDiscovery)
	}
	due := d.dueUnits(c.clock.Now(), misses)
	d.mu.Unlock()
	var gvs []groupVersion
	for _, u := range due {
		if u.gv == nil {
			c.read(ctx, u)
		} else {
			gvs = append(gvs, *u.gv)
		}
	}
	c.readGroupVersions(ctx, gvs)
	d.mu.Lock()
	rs, errs := d.snapshot()
	d.mu.Unlock()
	if len(errs) > 0 {
		return rs, fmt.Errorf("discovery: %d documents could not be read: %w", len(errs), errors.Join(errs...))
	}
	return rs, nil
}

// ResourceFor resolves a resource name as kubectl does: a plural, singular
// or short name, or a kind ("pods", "pod", "po", "Pod"), optionally
// qualified by group ("deployments.apps", "deploy.apps") or by version and
// group ("deployments.v1.apps"). Without a version it picks the preferred
// version; when several groups have the name, the core group wins, then the
// group the server ranks first. Subresources are not resolved. A name not
// found has discovery read again (a custom resource may be new), at most
// every few seconds; failing that, the error wraps ErrUnknownResource and
// suggests the likeliest name, and names the group versions that could not
// be read, where the name may be.
func (c *Client) ResourceFor(ctx context.Context, name string) (APIResource, error) {
	if name == "" {
		return APIResource{}, fmt.Errorf("resource %q: %w", name, ErrUnknownResource)
	}
	rs, err := c.discoverAll(ctx, false)
	if len(rs) == 0 && err != nil {
		return APIResource{}, err
	}
	if r, ok := resolve(rs, name); ok {
		return r, nil
	}
	if rs, err = c.discoverAll(ctx, true); len(rs) == 0 && err != nil {
		return APIResource{}, err
	}
	if r, ok := resolve(rs, name); ok {
		return r, nil
	}
	msg := fmt.Sprintf("resource %q", name)
	first, _, _ := strings.Cut(name, ".")
	if s := suggest(rs, Resource{Resource: first}); s != "" {
		msg += " (did you mean " + s + "?)"
	}
	if err != nil {
		return APIResource{}, fmt.Errorf("%s: %w; it may be served by what failed: %w", msg, ErrUnknownResource, err)
	}
	return APIResource{}, fmt.Errorf("%s: %w", msg, ErrUnknownResource)
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
