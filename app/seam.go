package app

// Where the app meets the root package: how a cache becomes an informer,
// and how the app learns that the informers have synced, and why not.

import (
	"errors"
	"fmt"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
)

// informerFor returns the factory's informer of r restricted by o.
func (a *App) informerFor(r httpwatch.Resource, o Options) (*listwatch.Informer, error) {
	if a.factory == nil {
		return nil, errors.New("call Watch from setup, once Run has connected")
	}
	f := a.factory
	var proj *raw.Projection
	if len(o.Project) > 0 {
		p, err := raw.NewProjection(o.Project...)
		if err != nil {
			return nil, err
		}
		proj = p
	}
	r.Namespace = o.Namespace
	// One informer per identity (decision 41): another Options of r is
	// another informer, named apart in logs, metrics and snapshot files.
	return f.ForResource(r, listwatch.Selector{Label: o.Labels, Field: o.Fields, Projection: proj}), nil
}

// keepErrors makes c remember the last error its informer met that is
// not routine: the reason Run gives when it has not synced in time.
func (c *Cache) keepErrors() {
	c.inf.OnError = func(err error) {
		var se *reflector.SyncError
		if errors.As(err, &se) && se.Routine {
			return
		}
		c.lastErr.Store(&err)
	}
}

// notSynced returns the caches that have not synced yet.
func (a *App) notSynced() []*Cache {
	var not []*Cache
	for _, c := range a.allCaches() {
		if !c.inf.HasSynced() {
			not = append(not, c)
		}
	}
	return not
}

// whyNotSynced says why the caches that have not synced have not: the
// last error each met.
func (a *App) whyNotSynced() error {
	var errs []error
	for _, c := range a.notSynced() {
		if p := c.lastErr.Load(); p != nil {
			errs = append(errs, fmt.Errorf("%s not synced: %w", c.inf.Name(), *p))
		} else {
			errs = append(errs, fmt.Errorf("%s not synced: no error seen, the server has not answered", c.inf.Name()))
		}
	}
	return errors.Join(errs...)
}
