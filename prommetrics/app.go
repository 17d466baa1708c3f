package prommetrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/listwatch/listwatch/app"
)

// Handler is an app.App's metrics, for its Metrics hook:
//
//	a.Metrics = prommetrics.Handler
//
// It registers, in a registry of its own, the app's client, informers and
// runners (see Register) with the Go runtime's and the process's
// collectors, and returns the handler that serves them; the app serves it
// at /metrics beside its probes.
func Handler(a *app.App) (http.Handler, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), collectors.NewGoCollector())
	if err := Register(reg, Sources{Client: a.Client(), Factory: a.Factory(), Runners: a.Runners()}); err != nil {
		return nil, err
	}
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), nil
}
