package listwatch

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/snapshot"
)

// Factory shares informers: one per Identity (resource, namespace,
// selectors, projection: decision 41), however many parts of a program ask
// for it, all started and stopped together.
//
//	f := listwatch.NewFactory(client)
//	pods := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})
//	pods.AddEventHandler(handler)
//	f.Start(ctx)
//	if err := f.Wait(ctx); err != nil {
//		return err // e.g. "pods not synced: ... 403 Forbidden: pods is forbidden: ..."
//	}
//
// Set the exported fields before the first ForResource; they apply to every
// informer the factory makes.
type Factory struct {
	Client *httpwatch.Client
	// Resync is the default handler resync period of every informer (0: none).
	Resync time.Duration
	// Namespace restricts the informers to one namespace ("" is all),
	// unless the Resource given to ForResource names its own.
	Namespace string
	// KeepManagedFields keeps metadata.managedFields in cached objects; by
	// default they are dropped while each object is read, before it is
	// copied.
	KeepManagedFields bool
	// Transform, if set, rewrites every object before it is cached.
	Transform func(*Object) (*Object, error)
	// Logger is every informer's Logger. Nil means the Client's, so that
	// one logger set on the client reaches every part.
	Logger *slog.Logger
	// Snapshot is every informer's Snapshot: set its Dir for warm starts
	// of all of them (decision 32), each in a file of its own, named after
	// its Identity (decision 41). With a Transform, name its version in
	// Snapshot.TransformVersion.
	Snapshot snapshot.Options
	// Configure, if set, is called with every new informer before it is
	// returned: the place to tune its fields further.
	Configure func(httpwatch.Resource, *Informer)

	mu        sync.Mutex
	informers map[Identity]*Informer
	started   map[Identity]bool
	shutdown  bool
	stops     []context.CancelFunc // of the contexts Start gave informers
	wg        sync.WaitGroup
}

// NewFactory returns a Factory of informers reading through client.
func NewFactory(client *httpwatch.Client) *Factory {
	return &Factory{
		Client:    client,
		informers: map[Identity]*Informer{},
		started:   map[Identity]bool{},
	}
}

// ForResource returns the factory's informer of r narrowed by sel (at
// most one Selector: the place a program says selectors and projection,
// decision 41), creating it on first use. The informer watches
// r.Namespace, or the factory's Namespace when r names none. Each Identity
// is one informer: asking again for the same resource, namespace,
// selectors and projection returns the same informer, and informers that
// differ in any of them are distinct, named apart in logs, metrics and
// snapshot files. More than one Selector is a programming error: it
// panics.
func (f *Factory) ForResource(r httpwatch.Resource, sel ...Selector) *Informer {
	if len(sel) > 1 {
		panic(fmt.Sprintf("listwatch: ForResource(%s) with %d selectors: give at most one", r, len(sel)))
	}
	var s Selector
	if len(sel) == 1 {
		s = sel[0]
	}
	if r.Namespace == "" {
		r.Namespace = f.Namespace
	}
	id := Identity{Resource: r, LabelSelector: s.Label, FieldSelector: s.Field, Projection: projectionString(s.Projection)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if inf, ok := f.informers[id]; ok {
		return inf
	}
	rc := f.Client.Resource(r)
	rc.KeepManagedFields = f.KeepManagedFields
	rc.Transform = f.Transform
	rc.Projection = s.Projection
	inf := NewInformer(rc, f.Resync)
	inf.Reflector.LabelSelector = s.Label
	inf.Reflector.FieldSelector = s.Field
	inf.Reflector.Name = id.String()
	inf.defaultName = id.String()
	inf.Snapshot = f.Snapshot
	switch {
	case f.Logger != nil:
		inf.Logger = f.Logger
	case f.Client.Logger != nil:
		inf.Logger = f.Client.Logger
	}
	if f.Configure != nil {
		f.Configure(r, inf)
	}
	f.informers[id] = inf
	return inf
}

// Informers returns the factory's informers by Identity, those made so
// far: for metrics that read each one's Stats.
func (f *Factory) Informers() map[Identity]*Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.informers)
}

// Start runs every informer not yet started, each until ctx is done or
// Shutdown is called. It may be called again after more ForResource calls;
// after Shutdown it does nothing.
func (f *Factory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	ctx, stop := context.WithCancel(ctx)
	f.stops = append(f.stops, stop)
	for r, inf := range f.informers {
		if f.started[r] {
			continue
		}
		f.started[r] = true
		f.wg.Go(func() { inf.Run(ctx) })
	}
}

// Shutdown stops every started informer, whether the context given to
// Start is done or not, waits for them to return (each saves its snapshot,
// if it keeps one) and makes later Starts do nothing, so that
// defer factory.Shutdown() never blocks for ever.
func (f *Factory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	stops := f.stops
	f.stops = nil
	f.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	f.wg.Wait()
}
