package reconcile

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Ready reports whether the runner is ready: its informers have synced.
// It says nothing of leadership, so that a standby replica is ready too;
// Leading says that.
func (r *Runner) Ready() error {
	if err := r.Live(); err != nil {
		return err
	}
	if !r.synced.Load() {
		return errors.New("informers not synced")
	}
	return nil
}

// Leading reports whether the runner reconciles now: it leads, or it runs
// without an election and has synced.
func (r *Runner) Leading() bool {
	if r.Election == nil {
		return r.synced.Load()
	}
	return r.leading.Load()
}

// LivenessTolerance is how long past its renew deadline a leader may still
// be reconciling before Live fails (see leader.Elector.Check).
const LivenessTolerance = 10 * time.Second

// Live reports whether the runner is healthy: Run has not failed, and a
// runner that lost its lease is not still reconciling.
func (r *Runner) Live() error {
	if err := r.runErr.Load(); err != nil {
		return fmt.Errorf("run ended: %w", *err)
	}
	if el := r.elector.Load(); el != nil {
		return el.Check(LivenessTolerance)
	}
	return nil
}

// Health returns an http.Handler for probes: /readyz answers 200 when
// Ready, /livez (and /healthz) 200 when Live, 503 with the reason
// otherwise. Each body also says whether the runner is synced and leading.
func (r *Runner) Health() http.Handler {
	mux := http.NewServeMux()
	probe := func(check func() error) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			var b strings.Builder
			err := check()
			fmt.Fprintf(&b, "synced: %t\nleading: %t\nqueued: %d\n", r.synced.Load(), r.Leading(), r.Len())
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "not ok: %v\n%s", err, b.String())
				return
			}
			fmt.Fprintf(w, "ok\n%s", b.String())
		}
	}
	mux.Handle("/readyz", probe(r.Ready))
	mux.Handle("/livez", probe(r.Live))
	mux.Handle("/healthz", probe(r.Live))
	return mux
}
