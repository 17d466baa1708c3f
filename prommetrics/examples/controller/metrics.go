//go:build !nometrics

package main

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/listwatch/listwatch/prommetrics"
	"github.com/listwatch/listwatch/reconcile"
)

// metricsHandler serves r's metrics, with the process's and the Go
// runtime's, as a controller-runtime manager does.
func metricsHandler(r *reconcile.Runner) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	if err := prommetrics.Register(reg, prommetrics.Sources{Runners: []*reconcile.Runner{r}}); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.Handle("/", r.Health())
	return mux, nil
}
