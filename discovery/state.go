package discovery

import (
	"context"
	"errors"
	"fmt"
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
	retryMin = 2 * time.Second
	retryMax = 2 * time.Minute
	// recheckAfter is the least age of a document before a miss in it (a
	// resource or group version it does not list) has it read again: a
	// custom resource installed since then shows up, and a misspelt name
	// costs at most one read per recheckAfter.
	recheckAfter = 5 * time.Second
)

var rootPaths = [2]string{"/api", "/apis"}

type groupVersion struct{ group, version string }

func (gv groupVersion) String() string {
	if gv.group == "" {
		return gv.version
	}
	return gv.group + "/" + gv.version
}

// root is the index in Cache.roots of the document listing gv.
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
		return !now.Before(r.at.Add(recheckAfter))
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
		r.wait = min(max(2*r.wait, retryMin), retryMax)
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

// Verdict is what discovery says of a resource.
type Verdict int

const (
	CannotTell Verdict = iota // no discovery, or it failed for the group version
	Served                    // the group version lists the resource
	NotServed                 // the group version answered without it, or does not exist
)

// ensureLoaded reads discovery once; concurrent callers wait for that one
// read (or their context). A read cut short by its caller's context is not
// kept: the next caller starts another.
func (c *Cache) ensureLoaded(ctx context.Context) error {
	for {
		c.mu.Lock()
		if c.loaded {
			c.mu.Unlock()
			return nil
		}
		if ch := c.loading; ch != nil {
			c.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return fmt.Errorf("discovery: %w", ctx.Err())
			}
		}
		ch := make(chan struct{})
		c.loading = ch
		c.roots[0].busy, c.roots[1].busy = true, true
		c.mu.Unlock()

		c.readRoot(ctx, 0)
		c.mu.Lock()
		absent := errors.Is(c.roots[0].err, ErrNotFound)
		c.absent = absent
		c.roots[1].busy = !absent
		c.mu.Unlock()
		if !absent {
			c.readRoot(ctx, 1)
		}

		c.mu.Lock()
		c.loading = nil
		c.loaded = ctx.Err() == nil
		c.mu.Unlock()
		close(ch)
		if ctx.Err() != nil {
			return fmt.Errorf("discovery: %w", ctx.Err())
		}
		return nil
	}
}

// Lookup says what discovery knows of a group version and resource: the
// resource when Served; the reason when NotServed (an error wrapping
// ErrUnknownResource with a suggestion) or when it cannot tell. A document
// that failed and is due for a retry, or that misses the resource and is
// due for a recheck, is read first, by this caller alone.
func (c *Cache) Lookup(ctx context.Context, group, version, resource string) (Verdict, APIResource, error) {
	if err := c.ensureLoaded(ctx); err != nil {
		return CannotTell, APIResource{}, err
	}
	// Only the first look may read a document; the second answers from it.
	for first := true; ; first = false {
		c.mu.Lock()
		v, ar, next, why := c.lookup(groupVersion{group, version}, resource, c.Clock.Now(), first)
		c.mu.Unlock()
		if next == nil {
			return v, ar, why
		}
		c.read(ctx, *next)
	}
}

// errNoDiscovery says why nothing can be told of a server without
// discovery.
var errNoDiscovery = errors.New("the server serves no discovery (404 on /api)")

// lookup is Lookup's answer from what is cached. With mayRead it also
// names the document to read first, marked busy, if one is due.
func (c *Cache) lookup(gv groupVersion, resource string, now time.Time, mayRead bool) (v Verdict, ar APIResource, next *unit, why error) {
	if c.absent {
		return CannotTell, ar, nil, errNoDiscovery
	}
	root := &c.roots[gv.root()]
	claim := func(u unit, rd *reads) *unit {
		if !mayRead || !rd.due(now) {
			return nil
		}
		rd.busy = true
		return &u
	}
	if root.err != nil {
		return CannotTell, ar, claim(unit{root: gv.root()}, &root.reads), fmt.Errorf("discovery: %w", root.err)
	}
	doc := c.gvs[gv]
	if doc == nil {
		return NotServed, ar, claim(unit{root: gv.root()}, &root.reads), c.unknown(gv, resource)
	}
	// Under aggregated discovery a group version is read again with its
	// root: when the group version is due after a failure (stale), or
	// the root is due for a recheck.
	if doc.err != nil {
		why = fmt.Errorf("discovery of %s: %w", gv, doc.err)
		if !root.aggregated {
			return CannotTell, ar, claim(unit{root: gv.root(), gv: &gv}, &doc.reads), why
		}
		if mayRead && doc.due(now) && !root.busy {
			root.busy = true
			next = &unit{root: gv.root()}
		}
		return CannotTell, ar, next, why
	}
	for _, a := range doc.resources {
		if a.Resource == resource {
			return Served, a, nil, nil
		}
	}
	if root.aggregated {
		return NotServed, ar, claim(unit{root: gv.root()}, &root.reads), c.unknown(gv, resource)
	}
	return NotServed, ar, claim(unit{root: gv.root(), gv: &gv}, &doc.reads), c.unknown(gv, resource)
}

// read reads one document; the caller has marked it busy.
func (c *Cache) read(ctx context.Context, u unit) {
	if u.gv == nil {
		c.readRoot(ctx, u.root)
		return
	}
	c.readGroupVersion(ctx, *u.gv)
}

// snapshot lists every resource of every group version that answered, core
// first, then the groups in the server's order, and the failures.
func (c *Cache) snapshot() ([]APIResource, []error) {
	var out []APIResource
	var errs []error
	for i := range c.roots {
		if c.roots[i].err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rootPaths[i], c.roots[i].err))
			continue
		}
		for _, gv := range c.roots[i].order {
			doc := c.gvs[gv]
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
func (c *Cache) dueUnits(now time.Time, misses bool) []unit {
	var out []unit
	for i := range c.roots {
		root := &c.roots[i]
		if (root.err != nil || misses) && root.due(now) {
			root.busy = true
			out = append(out, unit{root: i})
		}
		if root.err != nil {
			continue
		}
		for _, gv := range root.order {
			doc := c.gvs[gv]
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
