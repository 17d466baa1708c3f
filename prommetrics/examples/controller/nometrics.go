//go:build nometrics

package main

import (
	"net/http"

	"github.com/listwatch/listwatch/reconcile"
)

// metricsHandler, built without prommetrics (to measure what it costs),
// serves the health probes only.
func metricsHandler(r *reconcile.Runner) (http.Handler, error) {
	mux := http.NewServeMux()
	mux.Handle("/metrics", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, errNoMetrics.Error(), http.StatusNotFound)
	}))
	mux.Handle("/", r.Health())
	return mux, nil
}
