//go:build nometrics

package main

import (
	"errors"
	"net/http"

	"github.com/listwatch/listwatch/reconcile"
)

var errNoMetrics = errors.New("built with -tags nometrics: no /metrics")

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
