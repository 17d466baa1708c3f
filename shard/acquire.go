package shard

import (
	"context"
	"slices"
)

// Acquire waits until this member may process key, and returns a context
// for the work and the function to call when the work is done. It returns
// ErrNotOwned at once, or as soon as the key moves away while it waits,
// when another member owns the key by this member's view;
// processor.ErrStopped once
// Run is returning; ctx's error if ctx ends first. Before the member's
// first round (or while it sees no live member at all) nobody owns the
// key: Acquire waits.
//
// The key may be processed once this member's published acknowledgement
// gives it the key and every other holder of a lease of the group, as
// read after that publication, acknowledges a set that does not give the
// key to itself (see the package doc). The returned context is cancelled
// when the key moves to another member, when the lease is not renewed
// within RenewDeadline, or when Run returns: stop the work then, and call
// release in every case. A key is handed to another member only after
// release was called (or this member's lease expired).
func (m *Member) Acquire(ctx context.Context, key string) (context.Context, func(), error) {
	for {
		kctx, release, changed, err := m.tryAcquire(ctx, key)
		if changed == nil {
			return kctx, release, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// tryAcquire is one attempt of Acquire: it hands key out, or fails, or
// returns a channel closed when it is worth trying again.
func (m *Member) tryAcquire(ctx context.Context, key string) (context.Context, func(), <-chan struct{}, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.stopped:
		return nil, nil, nil, errStopped
	case Owner(key, m.view) == "":
		// No live member yet (before the first round, or while the group
		// cannot be read): nobody owns the key, so wait.
		return nil, nil, m.changed, nil
	case Owner(key, m.view) != m.cfg.Identity:
		return nil, nil, nil, ErrNotOwned
	case m.mayProcess(key):
		kctx, release := m.take(ctx, key)
		return kctx, release, nil, nil
	}
	return nil, nil, m.changed, nil
}

// mayProcess reports whether key, owned by the view, may be processed now;
// m.mu is held.
func (m *Member) mayProcess(key string) bool {
	if m.suspended || m.unsure || !m.checked || Owner(key, m.acked) != m.cfg.Identity {
		return false
	}
	for holder, acked := range m.claims {
		if holder != m.cfg.Identity && Owner(key, acked) == holder {
			return false
		}
	}
	return true
}

// take hands key out; m.mu is held.
func (m *Member) take(ctx context.Context, key string) (context.Context, func()) {
	kctx, cancel := context.WithCancelCause(ctx)
	g := &grant{key: key, cancel: cancel}
	m.held[g] = struct{}{}
	term := m.term
	stop := context.AfterFunc(term, func() { cancel(context.Cause(term)) })
	return kctx, func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if _, ok := m.held[g]; !ok {
			return // released before
		}
		delete(m.held, g)
		stop()
		cancel(context.Canceled)
		m.broadcast()
		if !slices.Equal(m.view, m.acked) {
			m.kickLoop() // the drain may be complete: publish now
		}
	}
}
