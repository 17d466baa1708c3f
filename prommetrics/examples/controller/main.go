// Command controller is examples/controller with Prometheus metrics: for
// each ConfigMap labelled app it keeps a Secret it controls with the same
// data, under leader election, and /metrics beside the probes on
// --health-addr carries the names controller-runtime's controllers export
// (workqueue_*, rest_client_*, controller_runtime_*,
// leader_election_master_status), so their dashboards read it unchanged,
// and listwatch_informer_* for its caches. The one line that differs from
// examples/controller is a.Metrics = metrics.
//
//	go run ./examples/controller                       # an embedded fake API server
//	go run ./examples/controller --kubeconfig ~/.kube/config
//	curl -s localhost:8081/metrics | grep -E '^(workqueue|controller_runtime)_'
//
// It lives in the prommetrics module, not beside the library's examples,
// so that the library module never depends on client_golang; built with
// -tags nometrics it has no /metrics, for a size comparison.
package main

import (
	"bytes"
	"context"
	"maps"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/patch"
)

const copyOf = "example.com/copy-of" // the label of the secrets it keeps

func main() { newApp().Main(setup) }

func newApp() *app.App {
	a := app.New("cm2secret")
	a.LeaderElection, a.Demo = true, demoServer
	a.Metrics = metrics
	return a
}

func setup(a *app.App) error {
	cms := a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
	secrets := a.Watch(app.Secrets, app.Options{Labels: copyOf})
	a.Reconcile(cms, func(ctx context.Context, r *app.Request) error {
		cm, ok := r.Object()
		if !ok {
			return nil // gone: the garbage collector deletes the secret it controlled
		}
		var c struct{ Data map[string]string }
		var s struct{ Data map[string][]byte }
		if err := cm.Decode(&c); err != nil {
			return err
		}
		data := map[string][]byte{}
		for k, v := range c.Data {
			data[k] = []byte(v)
		}
		name := cm.Name() + "-copy"
		if old, ok := secrets.Get(cm.Namespace(), name); ok && old.Decode(&s) == nil && maps.EqualFunc(s.Data, data, bytes.Equal) {
			return nil
		}
		_, err := secrets.Apply(ctx, patch.Object("v1", "Secret", cm.Namespace(), name).ControlledBy(cm).
			Set(patch.Path("metadata", "labels", copyOf), cm.Name()).Set("data", data))
		if err == nil {
			a.Eventf(cm, "Copied", "data copied to Secret %s", name)
		}
		return err
	}, secrets)
	return nil
}
