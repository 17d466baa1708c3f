package listwatch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/processor"
)

// ErrNotStarted is wrapped by the error Wait returns at once when there is
// nothing running to wait for: an informer whose Run was not called, a
// factory that started nothing, or an informer a factory made after its
// last Start.
var ErrNotStarted = errors.New("not started")

// Wait returns nil once the informer is synced (HasSynced): its first list
// is in the cache, or, after a warm start, the server confirmed the
// restored snapshot (decision 32; a snapshot merely read from disk is not
// enough, so that whatever Wait lets through acts on the server's state).
// It returns an error at once, rather than wait out ctx, when waiting
// cannot end well (decision 21):
//
//   - the last sync error is one retrying cannot cure (httpwatch.IsPermanent:
//     401, 403, an unknown resource, an unsupported field selector, a
//     wrong CA), wrapped;
//   - Run was not called within DefaultRunGrace of Wait (ErrNotStarted);
//   - Run returned before the informer synced (processor.ErrStopped).
//
// When ctx ends first, the error wraps ctx.Err() and the last sync error
// seen, if any. Routine errors (a relist after 410, a cut watch) are never
// the reason. Whatever Wait returns, the informer goes on retrying, so a
// fix made later (RBAC granted, a CRD installed) heals it: a program that
// waits through such a fix calls Wait again after a pause.
func (inf *Informer) Wait(ctx context.Context) error {
	err, _ := inf.wait(ctx)
	return err
}

// wait is Wait; permanent says it returned for a permanent error, so that
// Factory.Wait can stop waiting for the others.
func (inf *Informer) wait(ctx context.Context) (err error, permanent bool) {
	if err := inf.waitRunning(ctx); err != nil {
		return err, false
	}
	for {
		changed, last := inf.syncErr.get()
		if inf.HasSynced() {
			return nil, false
		}
		if last != nil && httpwatch.IsPermanent(last) {
			return fmt.Errorf("%s not synced: %w", inf.name(), last), true
		}
		select {
		case <-inf.warm.synced:
			return nil, false
		case <-changed:
		case <-inf.done:
			if inf.HasSynced() {
				return nil, false
			}
			return fmt.Errorf("%s not synced: informer %w", inf.name(), processor.ErrStopped), false
		case <-ctx.Done():
			if inf.HasSynced() {
				return nil, false
			}
			if _, last = inf.syncErr.get(); last == nil {
				return fmt.Errorf("%s not synced: %w (no sync error seen)", inf.name(), ctx.Err()), false
			}
			return fmt.Errorf("%s not synced: %w; last error: %w", inf.name(), ctx.Err(), last), false
		}
	}
}

// waitRunning returns once Run has begun, or why it may never.
func (inf *Informer) waitRunning(ctx context.Context) error {
	select {
	case <-inf.running:
		return nil
	default:
	}
	// Real time, not the informer's Clock: this bounds how long the Go
	// scheduler takes to start a goroutine, which a fake clock does not
	// model.
	t := time.NewTimer(inf.runGrace)
	defer t.Stop()
	select {
	case <-inf.running:
		return nil
	case <-t.C:
		return fmt.Errorf("%s not synced: informer %w: call Run (or Factory.Start) before Wait", inf.name(), ErrNotStarted)
	case <-ctx.Done():
		return fmt.Errorf("%s not synced: %w (Run not called)", inf.name(), ctx.Err())
	}
}

// name is the resource as the informer's errors name it.
func (inf *Informer) name() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.Reflector.Name
}

// Wait returns nil once every informer the factory made is synced (see
// Informer.Wait). It returns at once with an error wrapping ErrNotStarted
// when Start has started nothing, or when an informer was made after the
// last Start (so it would never sync), naming it; and as soon as one
// informer meets a failure retrying cannot cure, with the permanent errors
// seen. When ctx ends first, it returns the reasons of those not synced,
// joined. Every informer goes on retrying.
func (f *Factory) Wait(ctx context.Context) error {
	infs, err := f.waitable()
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make([]error, len(infs))
	permanent := make([]bool, len(infs))
	var wg sync.WaitGroup
	for i, inf := range infs {
		wg.Go(func() {
			errs[i], permanent[i] = inf.wait(ctx)
			if permanent[i] {
				stop() // the others' reasons are beside the point
			}
		})
	}
	wg.Wait()
	var permanents []error
	for i, err := range errs {
		if permanent[i] {
			permanents = append(permanents, err)
		}
	}
	if len(permanents) > 0 {
		return errors.Join(permanents...)
	}
	return errors.Join(errs...)
}

// waitable returns the informers Wait waits for, or why it cannot.
func (f *Factory) waitable() ([]*Informer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var infs []*Informer
	var unstarted []string
	for r, inf := range f.informers {
		if !f.started[r] {
			unstarted = append(unstarted, inf.Reflector.Name)
			continue
		}
		infs = append(infs, inf)
	}
	switch {
	case len(f.informers) == 0:
		return nil, fmt.Errorf("factory has no informers: %w (call ForResource, then Start, before Wait)", ErrNotStarted)
	case len(unstarted) > 0:
		slices.Sort(unstarted)
		return nil, fmt.Errorf("factory informers %s %w: call Start after the last ForResource", strings.Join(unstarted, ", "), ErrNotStarted)
	}
	return infs, nil
}
