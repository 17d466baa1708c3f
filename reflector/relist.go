package reflector

import (
	"context"
	"sync"
)

// relistRequest is what Relist leaves for the loop: a flag the loop takes,
// and a way to end the open watch so that a loop blocked on it wakes.
type relistRequest struct {
	mu    sync.Mutex
	asked bool
	stop  context.CancelFunc // ends the open watch's context; nil when none
}

// Relist asks the reflector to list again, as soon as it can: the open
// watch is ended, and the next list replaces what the Sink holds. A list
// that begins after the call satisfies it; so several calls made during a
// watch cost one list. Use it when what the Sink should hold changed
// without the server's objects changing (a filter in front of the Sink).
// Safe to call from any goroutine, before or during Run.
func (r *Reflector) Relist() {
	r.relist.mu.Lock()
	defer r.relist.mu.Unlock()
	r.relist.asked = true
	if r.relist.stop != nil {
		r.relist.stop()
	}
}

// takeRelist reports whether a relist was asked for, and clears the
// request: the caller is about to list.
func (r *Reflector) takeRelist() bool {
	r.relist.mu.Lock()
	defer r.relist.mu.Unlock()
	asked := r.relist.asked
	r.relist.asked = false
	return asked
}

func (r *Reflector) relistAsked() bool {
	r.relist.mu.Lock()
	defer r.relist.mu.Unlock()
	return r.relist.asked
}

// watchContext returns the context of a new watch, which Relist ends; it is
// ended at once if a relist is already asked for.
func (r *Reflector) watchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	wctx, cancel := context.WithCancel(ctx)
	r.relist.mu.Lock()
	defer r.relist.mu.Unlock()
	r.relist.stop = cancel
	if r.relist.asked {
		cancel()
	}
	return wctx, cancel
}
