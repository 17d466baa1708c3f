package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// How often discovery documents are read again. Nothing reads them in the
// background: a document is re-read by the request that needs it, when it
// is due, and concurrent requests meanwhile use what is known (so a client
// that is never closed leaves nothing running, and no request waits behind
// another's discovery except the very first read).
const (
	// retryMin and retryMax bound the wait before a document that failed
	// (a 503 from an aggregated API that is down, a timeout) is read again;
	// it doubles from retryMin after each failure.
	discoveryRetryMin = 2 * time.Second
	discoveryRetryMax = 2 * time.Minute
	// recheckAfter is the least age of a document before a miss in it (a
	// resource or group version it does not list) has it read again: a
	// custom resource installed since then shows up, and a misspelt name
	// costs at most one read per recheckAfter.
	discoveryRecheckAfter = 5 * time.Second
)

// discovery caches what the server serves, per group version, so that one
// group version that fails (an aggregated API that is down) leaves the
// others usable.
type discovery struct {
	mu sync.Mutex
	// loading is closed when the first read ends; nil before and after.
	loading chan struct{}
	loaded  bool
	// absent: the server serves no discovery (404 on /api), so it is not
	// asked again.
	absent bool
	roots  [2]rootDoc // /api and /apis
	gvs    map[groupVersion]*gvDoc
}

var rootPaths = [2]string{"/api", "/apis"}

type groupVersion struct{ group, version string }

func (gv groupVersion) String() string {
	if gv.group == "" {
		return gv.version
	}
	return gv.group + "/" + gv.version
}

// root is the index in discovery.roots of the document listing gv.
func (gv groupVersion) root() int {
	if gv.group == "" {
		return 0
	}
	return 1
}

// reads is the history of one document: its last failure, if any, and when
// it may be read next.
type reads struct {
	err  error
	at   time.Time     // the last read, successful or not
	wait time.Duration // after a failure, before the next read
	busy bool          // a read is in flight
}

// due reports whether the document may be read again: after a failure once
// the backoff has passed, after a success (to recheck a miss) once
// recheckAfter has.
func (r *reads) due(now time.Time) bool {
	switch {
	case r.busy:
		return false
	case r.err != nil:
		return !now.Before(r.at.Add(r.wait))
	default:
		return !now.Before(r.at.Add(discoveryRecheckAfter))
	}
}

// done records a read. A read that failed because its caller gave up
// (ctx ended) says nothing of the server, and may be tried again at once.
func (r *reads) done(ctx context.Context, now time.Time, err error) {
	r.busy, r.at, r.err = false, now, err
	switch {
	case err == nil, ctx.Err() != nil:
		r.wait = 0
	default:
		r.wait = min(max(2*r.wait, discoveryRetryMin), discoveryRetryMax)
	}
}

// rootDoc is /api or /apis.
type rootDoc struct {
	reads
	aggregated bool
	order      []groupVersion // the server's order: groups by priority, preferred version first
}

// gvDoc is what is known of one group version. Under legacy discovery it
// is a document of its own (reads); under aggregated discovery it is part
// of its root's, and err says that the server marked it stale.
type gvDoc struct {
	reads
	preferred bool
	resources []APIResource
}

// unit is one document to read: a root (gv zero) or a group version's.
type unit struct {
	root int
	gv   *groupVersion
}

// verdict is what discovery says of a resource.
type verdict int

const (
	cannotTell verdict = iota // no discovery, or it failed for the group version
	served                    // the group version lists the resource
	notServed                 // the group version answered without it, or does not exist
)

// ensureLoaded reads discovery once; concurrent callers wait for that one
// read (or their context). A read cut short by its caller's context is not
// kept: the next caller starts another.
func (c *Client) ensureLoaded(ctx context.Context) error {
	d := &c.discovery
	for {
		d.mu.Lock()
		if d.loaded {
			d.mu.Unlock()
			return nil
		}
		if ch := d.loading; ch != nil {
			d.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return fmt.Errorf("discovery: %w", ctx.Err())
			}
		}
		ch := make(chan struct{})
		d.loading = ch
		if d.gvs == nil {
			d.gvs = map[groupVersion]*gvDoc{}
		}
		d.roots[0].busy, d.roots[1].busy = true, true
		d.mu.Unlock()

		c.readRoot(ctx, 0)
		d.mu.Lock()
		absent := IsNotFound(d.roots[0].err)
		d.absent = absent
		d.roots[1].busy = !absent
		d.mu.Unlock()
		if !absent {
			c.readRoot(ctx, 1)
		}

		d.mu.Lock()
		d.loading = nil
		d.loaded = ctx.Err() == nil
		d.mu.Unlock()
		close(ch)
		if ctx.Err() != nil {
			return fmt.Errorf("discovery: %w", ctx.Err())
		}
		return nil
	}
}

// judge says what discovery knows of r's group version and resource: the
// resource when served; the reason when not served (an error wrapping
// ErrUnknownResource with a suggestion) or when it cannot tell. A document
// that failed and is due for a retry, or that misses r and is due for a
// recheck, is read first, by this caller alone.
func (c *Client) judge(ctx context.Context, r Resource) (verdict, APIResource, error) {
	if err := c.ensureLoaded(ctx); err != nil {
		return cannotTell, APIResource{}, err
	}
	for pass := 0; ; pass++ {
		c.discovery.mu.Lock()
		v, ar, next, why := c.discovery.lookup(r, c.clock.Now(), pass == 0)
		c.discovery.mu.Unlock()
		if next == nil {
			return v, ar, why
		}
		c.read(ctx, *next)
	}
}

// errNoDiscovery says why nothing can be told of a server without
// discovery.
var errNoDiscovery = errors.New("the server serves no discovery (404 on /api)")

// lookup is judge's answer from what is cached. With mayRead it also names
// the document to read first, marked busy, if one is due.
func (d *discovery) lookup(r Resource, now time.Time, mayRead bool) (v verdict, ar APIResource, next *unit, why error) {
	if d.absent {
		return cannotTell, ar, nil, errNoDiscovery
	}
	gv := groupVersion{r.Group, r.Version}
	root := &d.roots[gv.root()]
	claim := func(u unit, rd *reads) *unit {
		if !mayRead || !rd.due(now) {
			return nil
		}
		rd.busy = true
		return &u
	}
	if root.err != nil {
		return cannotTell, ar, claim(unit{root: gv.root()}, &root.reads), fmt.Errorf("discovery: %w", root.err)
	}
	doc := d.gvs[gv]
	if doc == nil {
		return notServed, ar, claim(unit{root: gv.root()}, &root.reads), d.unknown(r)
	}
	// Under aggregated discovery a group version is read again with its
	// root: when the group version is due after a failure (stale), or
	// the root is due for a recheck.
	if doc.err != nil {
		why = fmt.Errorf("discovery of %s: %w", gv, doc.err)
		if !root.aggregated {
			return cannotTell, ar, claim(unit{root: gv.root(), gv: &gv}, &doc.reads), why
		}
		if mayRead && doc.due(now) && !root.busy {
			root.busy = true
			next = &unit{root: gv.root()}
		}
		return cannotTell, ar, next, why
	}
	for _, a := range doc.resources {
		if a.Resource.Resource == r.Resource {
			return served, a, nil, nil
		}
	}
	if root.aggregated {
		return notServed, ar, claim(unit{root: gv.root()}, &root.reads), d.unknown(r)
	}
	return notServed, ar, claim(unit{root: gv.root(), gv: &gv}, &doc.reads), d.unknown(r)
}

// read reads one document; the caller has marked it busy.
func (c *Client) read(ctx context.Context, u unit) {
	if u.gv == nil {
		c.readRoot(ctx, u.root)
		return
	}
	c.readGroupVersion(ctx, *u.gv)
}

// snapshot lists every resource of every group version that answered, core
// first, then the groups in the server's order, and the failures.
func (d *discovery) snapshot() ([]APIResource, []error) {
	var out []APIResource
	var errs []error
	for i := range d.roots {
		if d.roots[i].err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rootPaths[i], d.roots[i].err))
			continue
		}
		for _, gv := range d.roots[i].order {
			doc := d.gvs[gv]
			if doc.err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", gv, doc.err))
				continue
			}
			out = append(out, doc.resources...)
		}
	}
	return out, errs
}

// dueUnits claims every document due for a read: with misses, those that
// are due for a recheck too; otherwise only the failed ones.
func (d *discovery) dueUnits(now time.Time, misses bool) []unit {
	var out []unit
	for i := range d.roots {
		root := &d.roots[i]
		if (root.err != nil || misses) && root.due(now) {
			root.busy = true
			out = append(out, unit{root: i})
		}
		if root.err != nil {
			continue
		}
		for _, gv := range root.order {
			doc := d.gvs[gv]
			switch {
			case root.aggregated:
				// Read again with its root.
				if doc.err != nil && doc.due(now) && !root.busy {
					root.busy = true
					out = append(out, unit{root: i})
				}
			case (doc.err != nil || misses) && doc.due(now):
				doc.busy = true
				out = append(out, unit{root: i, gv: &gv})
			}
		}
	}
	return out
}
