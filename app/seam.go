package app

// The two places the app meets the root package's factory and waits; both
// follow the root package's API as it changes (see /work/coord/API.md).

import (
	"context"
	"errors"
	"fmt"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
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
	if _, taken := f.Informers()[r]; taken {
		return nil, fmt.Errorf("%s is watched already with other options", r)
	}
	f.Namespace, f.LabelSelector, f.FieldSelector, f.Projection = o.Namespace, o.Labels, o.Fields, proj
	return f.ForResource(r), nil
}

// synced reports whether every informer of the app has synced.
func (a *App) synced() bool {
	for _, c := range a.allCaches() {
		if !c.inf.HasSynced() {
			return false
		}
	}
	return true
}

// whyNotSynced says why the informers that have not synced have not:
// the last sync error each met.
func (a *App) whyNotSynced() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errs []error
	for _, c := range a.allCaches() {
		if !c.inf.HasSynced() {
			errs = append(errs, c.inf.WaitForSync(ctx))
		}
	}
	return errors.Join(errs...)
}
