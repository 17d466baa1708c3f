package prommetrics_test

import (
	"context"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics"
	"github.com/listwatch/listwatch/watchtest"
)

// A client's requests, counted under client-go's name and labels.
func ExampleRegister() {
	s := watchtest.NewServer()
	defer s.Close()
	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	defer client.CloseIdleConnections()

	reg := prometheus.NewRegistry()
	if err := prommetrics.Register(reg, prommetrics.Sources{Client: client}); err != nil {
		panic(err)
	}
	pods := client.Resource(watchtest.Pods).Namespace("default")
	pods.List(context.Background(), httpwatch.ListOptions{})
	pods.Get(context.Background(), "missing")

	fams, _ := reg.Gather()
	for _, f := range fams {
		if f.GetName() != "rest_client_requests_total" {
			continue
		}
		for _, m := range f.Metric {
			labels := map[string]string{}
			for _, l := range m.Label {
				labels[l.GetName()] = l.GetValue()
			}
			fmt.Printf("%s code=%s method=%s: %v\n", f.GetName(), labels["code"], labels["method"], m.Counter.GetValue())
		}
	}
	// Output:
	// rest_client_requests_total code=200 method=GET: 1
	// rest_client_requests_total code=404 method=GET: 1
}
