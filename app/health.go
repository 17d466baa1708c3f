package app

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Ready reports whether the program is ready: every cache has synced
// (a cache restored from a snapshot counts once the server confirmed it)
// and the shutdown has not begun. A standby replica under leader election
// is ready too: it would take over on a warm cache. The error says what
// is not.
func (a *App) Ready() error {
	if a.stopping.Load() {
		return errors.New("shutting down")
	}
	var not []string
	for _, c := range a.notSynced() {
		not = append(not, c.inf.Name())
	}
	if len(not) > 0 {
		return fmt.Errorf("not synced: %s", strings.Join(not, ", "))
	}
	return nil
}

// Live reports whether the program is healthy: no runner has failed, and
// none still reconciles past its lease (reconcile.Runner.Live).
func (a *App) Live() error {
	var errs []error
	for _, r := range a.Runners() {
		if err := r.Live(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", r.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Health returns the handler of the app's probes: /readyz answers 200
// when Ready, /healthz and /livez 200 when Live, 503 with the reason
// otherwise; each body also lists the caches and, under leader election,
// whether this replica leads. metrics, if not nil, is served at /metrics.
func (a *App) health(metrics http.Handler) http.Handler {
	mux := http.NewServeMux()
	probe := func(check func() error) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			err := check()
			if err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintf(w, "%s\n", err)
			} else {
				fmt.Fprintln(w, "ok")
			}
			a.describe(w)
		}
	}
	mux.Handle("/readyz", probe(a.Ready))
	mux.Handle("/healthz", probe(a.Live))
	mux.Handle("/livez", probe(a.Live))
	if metrics != nil {
		mux.Handle("/metrics", metrics)
	}
	return mux
}

// Health is the handler Run serves on HealthAddr, without /metrics: for a
// program that serves its probes itself.
func (a *App) Health() http.Handler { return a.health(nil) }

// describe writes each cache's state and each runner's leadership.
func (a *App) describe(w http.ResponseWriter) {
	for _, c := range a.allCaches() {
		state := "synced"
		if !c.inf.HasSynced() {
			state = "not synced"
			if p := c.lastErr.Load(); p != nil {
				state += ": " + (*p).Error()
			}
		}
		fmt.Fprintf(w, "cache %s: %s\n", c.inf.Name(), state)
	}
	if !a.LeaderElection {
		return
	}
	for _, r := range a.Runners() {
		role := "standby"
		if r.Leading() {
			role = "leading"
		}
		fmt.Fprintf(w, "runner %s: %s\n", r.Name, role)
	}
}
