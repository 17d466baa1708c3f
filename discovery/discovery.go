package discovery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/listwatch/listwatch/clock"
)

// APIResource is one resource as the server's discovery describes it.
type APIResource struct {
	// Group, Version and Resource (plural, lower case, as in the URL)
	// name it; the core group is "".
	Group, Version, Resource string
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

// String names the resource as kubectl's resource.version.group, e.g.
// "pods.v1" or "deployments.v1.apps".
func (r APIResource) String() string {
	if r.Group == "" {
		return r.Resource + "." + r.Version
	}
	return r.Resource + "." + r.Version + "." + r.Group
}

// ErrUnknownResource is wrapped by ResourceFor when the server serves no
// resource of the name given, and by Lookup's reason when the server does
// not serve the resource asked about; so is the error of every httpwatch
// request (list, watch, get, write) on a resource the server does not
// serve: its 404 then means a misspelt name or a group version the server
// lacks, not an object that is gone, so httpwatch.IsNotFound does not
// accept it, and httpwatch.IsPermanent does. The message suggests the
// likeliest name when discovery knows one ("did you mean configmaps?").
var ErrUnknownResource = errors.New("the server has no such resource")

// ErrNotFound is what a Fetcher's error wraps for a document the server
// does not have (a 404): on /api, it means the server serves no discovery,
// and it is not asked again.
var ErrNotFound = errors.New("the server has no such document")

// Fetcher reads one discovery document: the body of a GET of path with the
// Accept header accept, in a single attempt (a document that fails is read
// again later, when due, rather than retried while a request waits). A
// 404's error wraps ErrNotFound.
type Fetcher interface {
	Fetch(ctx context.Context, path, accept string) ([]byte, error)
}

// Cache is what the server serves, as its discovery says, kept per group
// version (decision 23): one group version that fails (an aggregated API
// that is down answers 503) leaves the others usable. Everything is read
// by the calls that need it, the first time and again when due; nothing
// runs in the background. It is safe for concurrent use.
type Cache struct {
	// Clock tells when a document is due to be read again. New sets
	// clock.Real; change it before first use.
	Clock clock.Clock

	fetch Fetcher
	mu    sync.Mutex
	// loading is closed when the first read ends; nil before and after.
	loading chan struct{}
	loaded  bool
	// absent: the server serves no discovery (404 on /api), so it is not
	// asked again.
	absent bool
	roots  [2]rootDoc // /api and /apis
	gvs    map[groupVersion]*gvDoc
}

// New returns a cache of the discovery f reads; it reads nothing yet.
func New(f Fetcher) *Cache {
	return &Cache{Clock: clock.Real, fetch: f, gvs: map[groupVersion]*gvDoc{}}
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
// call that needs them.
func (c *Cache) Discover(ctx context.Context) ([]APIResource, error) {
	return c.discoverAll(ctx, false)
}

// discoverAll is Discover; with misses, documents read a while ago are
// read again too, for a name not found in them.
func (c *Cache) discoverAll(ctx context.Context, misses bool) ([]APIResource, error) {
	if err := c.ensureLoaded(ctx); err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.absent {
		c.mu.Unlock()
		return nil, fmt.Errorf("discovery: %w", errNoDiscovery)
	}
	due := c.dueUnits(c.Clock.Now(), misses)
	c.mu.Unlock()
	var gvs []groupVersion
	for _, u := range due {
		if u.gv == nil {
			c.read(ctx, u)
		} else {
			gvs = append(gvs, *u.gv)
		}
	}
	c.readGroupVersions(ctx, gvs)
	c.mu.Lock()
	rs, errs := c.snapshot()
	c.mu.Unlock()
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
func (c *Cache) ResourceFor(ctx context.Context, name string) (APIResource, error) {
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
	if s := suggest(rs, groupVersion{}, first); s != "" {
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
	if n == r.Resource || n == r.Singular || strings.EqualFold(n, r.Kind) {
		return true
	}
	for _, s := range r.ShortNames {
		if n == s {
			return true
		}
	}
	return false
}
