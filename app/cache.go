package app

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/store"
)

// Options say which objects of a resource a cache holds, and what of
// them: a listwatch.Selector with the namespace, and the projection as
// its paths. The zero value holds every object of every namespace, whole
// (but for metadata.managedFields).
type Options struct {
	// Namespace restricts the cache to one namespace; "" is all.
	Namespace string
	// Labels and Fields are label and field selectors the server applies
	// to every list and watch ("app", "spec.nodeName=node-1").
	Labels, Fields string
	// Project, if set, keeps only these paths of each object (see
	// raw.Projection); identity and kind are always kept.
	Project []string
}

// Cache is a shared, synced cache of one resource's objects, with the
// writes a reconciler makes to them. Read it once Run has synced it.
type Cache struct {
	app      *App
	resource httpwatch.Resource
	opts     Options
	inf      *listwatch.Informer
	lastErr  atomic.Pointer[error] // the last error not routine
}

// Watch returns the cache of r's objects that opts select, making its
// informer on first use: everything that watches the same resource with
// the same options shares one (the informer's identity, decision 41),
// and other options of the same resource are another cache. Call it from setup. A wrong option (a
// projection path that cannot be kept) makes Run fail.
func (a *App) Watch(r httpwatch.Resource, opts ...Options) *Cache {
	var o Options
	switch len(opts) {
	case 0:
	case 1:
		o = opts[0]
	default:
		a.fail(fmt.Errorf("app: Watch %s: more than one Options", r))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	inf, err := a.informerFor(r, o)
	if err != nil {
		a.errs = append(a.errs, fmt.Errorf("app: Watch %s: %w", r, err))
		return &Cache{app: a, resource: r, opts: o}
	}
	for _, c := range a.caches {
		if c.inf == inf { // the factory's: one informer per identity
			return c
		}
	}
	c := &Cache{app: a, resource: r, opts: o, inf: inf}
	c.keepErrors()
	a.caches = append(a.caches, c)
	return c
}

// Informer is the cache's informer, for what the cache does not say:
// handlers, indexers, Stats.
func (c *Cache) Informer() *listwatch.Informer { return c.inf }

// Get returns the cached object namespace/name ("" namespace for a
// cluster-scoped one), and whether it is there.
func (c *Cache) Get(namespace, name string) (*listwatch.Object, bool) {
	if c.inf == nil {
		return nil, false
	}
	o, err := c.inf.Lister().Get(namespace, name)
	return o, err == nil
}

// List returns every cached object; Informer().Lister() reads by
// selector or namespace.
func (c *Cache) List() []*listwatch.Object {
	if c.inf == nil {
		return nil
	}
	return c.inf.Indexer().List()
}

// Apply applies b's object with server-side apply, as the app's field
// manager, taking over fields others set (a controller owns what it
// applies), and returns the object the server holds.
func (c *Cache) Apply(ctx context.Context, b *patch.Builder) (*listwatch.Object, error) {
	body, err := b.Bytes()
	if err != nil {
		return nil, err
	}
	return c.app.client.Resource(c.resource).Apply(ctx, body, httpwatch.WriteOptions{FieldManager: c.app.Name, Force: true})
}

// Request is one reconcile of one key of a cache.
type Request struct {
	// Key is "namespace/name", or "name" for a cluster-scoped object.
	Key             string
	Namespace, Name string

	cache  *Cache
	result reconcile.Result
}

// Object returns the cached object of the key, or false when it is gone
// (deleted, or no longer selected).
func (r *Request) Object() (*listwatch.Object, bool) {
	return r.cache.Get(r.Namespace, r.Name)
}

// RequeueAfter asks for the key to be reconciled again after d, whatever
// changes meanwhile.
func (r *Request) RequeueAfter(d time.Duration) { r.result.RequeueAfter = d }

// Func reconciles one key: it reads the object from the cache and makes
// the world agree with it. An error retries the key with backoff; it is
// logged once per kind of failure (decision 20).
type Func func(ctx context.Context, r *Request) error

// Reconcile runs fn over the keys of c: once for each change of an object
// in c, and once for each change of an object in one of owned whose
// controller (the owner reference with controller: true) is an object of
// c. Call it from setup; Run makes the runner, with the app's workers,
// leader election and logger.
func (a *App) Reconcile(c *Cache, fn Func, owned ...*Cache) {
	if c == nil || c.inf == nil || fn == nil {
		a.fail(fmt.Errorf("app: Reconcile needs a cache from Watch and a Func"))
		return
	}
	a.mu.Lock()
	name := a.Name
	if n := len(a.runners); n > 0 {
		name = fmt.Sprintf("%s-%d", a.Name, n+1)
	}
	a.mu.Unlock()
	keys := c // the cache the runner's keys come from
	var member *shard.Member
	if a.Shards {
		var err error
		if keys, member, err = a.shardOf(c, name); err != nil {
			a.fail(fmt.Errorf("app: Reconcile of %s: %w", c.resource, err))
			return
		}
	}
	r := reconcile.New(keys.inf, func(ctx context.Context, key string) (reconcile.Result, error) {
		ns, name, _ := store.SplitKey(key)
		req := &Request{Key: key, Namespace: ns, Name: name, cache: keys}
		err := fn(ctx, req)
		return req.result, err
	})
	r.Name, r.Member = name, member
	for _, o := range owned {
		if o == nil || o.inf == nil {
			a.fail(fmt.Errorf("app: Reconcile of %s: an owned cache is not from Watch", c.resource))
			return
		}
		r.Watches = append(r.Watches, reconcile.Watch{Informer: o.inf, Keys: controlledBy(keys)})
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.runners = append(a.runners, r)
}

// shardOf returns a cache of c's objects filtered to the keys this
// replica owns in the group name, and its membership: the runner's own,
// since other readers of c want every key. It keeps no snapshot: its
// contents depend on the group's view at the time.
func (a *App) shardOf(c *Cache, name string) (*Cache, *shard.Member, error) {
	r := c.resource
	r.Namespace = c.opts.Namespace
	rc := a.client.Resource(r)
	if len(c.opts.Project) > 0 {
		p, err := raw.NewProjection(c.opts.Project...)
		if err != nil {
			return nil, nil, err
		}
		rc.Projection = p
	}
	var inf *listwatch.Informer
	m, err := shard.New(shard.Config{
		Leases: a.client.Resource(leases).Namespace(a.LeaseNamespace), Group: name, Identity: a.Identity,
		Logger: a.Logger, Clock: a.Clock,
		OnChange: func(members []string) {
			a.reachedLease()
			a.Logger.Info("app: shard members", "app", a.Name, "group", name, "members", members)
			inf.Relist()
		},
		OnError: a.leaseFailed,
	})
	if err != nil {
		return nil, nil, err
	}
	inf = listwatch.NewInformer(m.Source(rc), 0, listwatch.Selector{Label: c.opts.Labels, Field: c.opts.Fields})
	inf.Logger = a.Logger
	inf.Reflector.Name = fmt.Sprintf("%s, shard of %s", c.inf.Name(), name)
	sc := &Cache{app: a, resource: c.resource, opts: c.opts, inf: inf}
	sc.keepErrors()
	a.mu.Lock()
	a.sharded = append(a.sharded, sc)
	a.mu.Unlock()
	return sc, m, nil
}

// controlledBy maps an object to the key of its controller when that is
// an object of c: same namespace, same name, same uid. Matching the uid
// needs no kind, and ignores an owner deleted and made again.
func controlledBy(c *Cache) func(*listwatch.Object) []string {
	return func(o *listwatch.Object) []string {
		var keys []string
		for _, ref := range o.Get("metadata.ownerReferences").Array() {
			if !ref.Get("controller").Bool() {
				continue
			}
			owner, ok := c.Get(o.Namespace(), ref.Get("name").String())
			if ok && owner.UID() == ref.Get("uid").String() {
				keys = append(keys, listwatch.Key(owner))
			}
		}
		return slices.Compact(keys)
	}
}
