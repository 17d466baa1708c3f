package listwatch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reflector"
)

// WaitForSync waits until the informer's first list is in its cache (or,
// after a warm start, the server confirmed the restored snapshot: decision
// 32) and returns nil, or until ctx is done and returns why it has not synced: an
// error wrapping ctx.Err() and the last sync error the informer met (a
// *reflector.SyncError wrapping, say, an *httpwatch.StatusError), so that
// errors.As, errors.Is and the httpwatch predicates see both. Routine
// errors (a relist after 410, a cut watch) are never the reason.
//
// A failure that will not fix itself waits as long as ctx allows; see
// WaitForSyncFailFast to stop at once. Either way the informer goes on
// retrying, so a fix made later (RBAC granted, a CRD installed) heals it.
func (inf *Informer) WaitForSync(ctx context.Context) error {
	err, _ := inf.wait(ctx, false, false)
	return err
}

// WaitForSyncFailFast is WaitForSync that also returns as soon as the last
// sync error is one retrying cannot cure (httpwatch.IsPermanent: 401, 403,
// 404 on the resource, 400 or 422 such as an unsupported field selector,
// an unknown resource), with that error. Use it where a person or a
// restart can act on the error sooner than the informer's retries would
// heal it: at the start of a command-line tool or a deployment.
func (inf *Informer) WaitForSyncFailFast(ctx context.Context) error {
	err, _ := inf.wait(ctx, true, false)
	return err
}

// WaitForLoaded is WaitForSyncFailFast that also returns nil as soon as
// Loaded is closed: a snapshot restored (decision 32), readable before the
// server confirms it, or the first sync. A program that reads a
// warm-started cache waits with it, and still learns at once of an error
// that will not fix itself (a 403 on the first start, with no snapshot)
// instead of waiting on Loaded for ever. With a snapshot, its objects
// usually load in milliseconds, before the server answers; if a permanent
// error comes first, it is returned.
func (inf *Informer) WaitForLoaded(ctx context.Context) error {
	err, _ := inf.wait(ctx, true, true)
	return err
}

// wait is the waits; permanent says it returned for a permanent error.
// With loaded, a closed Loaded is enough.
func (inf *Informer) wait(ctx context.Context, failFast, loaded bool) (err error, permanent bool) {
	var loadedC <-chan struct{} // nil, never ready, unless loaded
	if loaded {
		loadedC = inf.Loaded()
	}
	ready := func() bool {
		select {
		case <-loadedC:
			return true
		default:
			return inf.HasSynced()
		}
	}
	for {
		changed, last := inf.syncErr.get()
		if ready() {
			return nil, false
		}
		if failFast && last != nil && httpwatch.IsPermanent(last) {
			return fmt.Errorf("%s not synced: %w", inf.name(), last), true
		}
		select {
		case <-inf.Synced():
			return nil, false
		case <-loadedC:
			return nil, false
		case <-changed:
		case <-ctx.Done():
			if ready() {
				return nil, false
			}
			if _, last = inf.syncErr.get(); last == nil {
				return fmt.Errorf("%s not synced: %w (no sync error seen)", inf.name(), ctx.Err()), false
			}
			return fmt.Errorf("%s not synced: %w; last error: %w", inf.name(), ctx.Err(), last), false
		}
	}
}

// name is the resource as the informer's errors name it.
func (inf *Informer) name() string {
	inf.mu.Lock()
	defer inf.mu.Unlock()
	return inf.Reflector.Name
}

// lastError keeps the last sync error that was not routine, and wakes the
// waits when it changes.
type lastError struct {
	mu      sync.Mutex
	err     error
	changed chan struct{} // closed, and replaced, by each set
}

// note records err if it is a failure worth returning from a wait.
func (l *lastError) note(err error) {
	var se *reflector.SyncError
	if !errors.As(err, &se) || se.Routine {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = se
	if l.changed != nil {
		close(l.changed)
	}
	l.changed = make(chan struct{})
}

func (l *lastError) get() (<-chan struct{}, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.changed, l.err
}

// WaitForSync waits until every started informer has synced and returns
// nil, or until ctx is done and returns the reasons of those that have not
// (see Informer.WaitForSync), joined.
func (f *Factory) WaitForSync(ctx context.Context) error { return f.wait(ctx, false) }

// WaitForSyncFailFast is WaitForSync that also returns as soon as one
// informer's last sync error is one retrying cannot cure, with the
// permanent errors seen (see Informer.WaitForSyncFailFast). Every informer
// goes on retrying.
func (f *Factory) WaitForSyncFailFast(ctx context.Context) error { return f.wait(ctx, true) }

func (f *Factory) wait(ctx context.Context, failFast bool) error {
	infs := slices.Collect(maps.Values(f.startedInformers()))
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make([]error, len(infs))
	permanent := make([]bool, len(infs))
	var wg sync.WaitGroup
	for i, inf := range infs {
		wg.Go(func() {
			errs[i], permanent[i] = inf.wait(ctx, failFast, false)
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

// startedInformers returns the informers Start has started.
func (f *Factory) startedInformers() map[httpwatch.Resource]*Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	started := map[httpwatch.Resource]*Informer{}
	for r, inf := range f.informers {
		if f.started[r] {
			started[r] = inf
		}
	}
	return started
}

// WaitForCacheSync waits until every check reports true or ctx is done, and
// says which. It polls every 100 ms, like client-go. It remains for what
// the informers' waits do not cover: a handler's Registration.HasSynced
// (its handler has seen the first list) and checks of one's own.
func WaitForCacheSync(ctx context.Context, synced ...func() bool) bool {
	return waitForCacheSync(ctx, clock.Real, synced...)
}

// syncedPollPeriod is how often WaitForCacheSync polls (conformance 75).
const syncedPollPeriod = 100 * time.Millisecond

func waitForCacheSync(ctx context.Context, clk clock.Clock, synced ...func() bool) bool {
	t := clk.NewTimer(syncedPollPeriod)
	defer t.Stop()
	for {
		all := true
		for _, s := range synced {
			all = all && s()
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			t.Reset(syncedPollPeriod)
		}
	}
}
