// Command controller is examples/controller with one line more, a.Metrics:
// /metrics beside its probes carries the names controller-runtime's
// controllers export (workqueue_*, rest_client_*, controller_runtime_*,
// leader_election_master_status), and listwatch_informer_* for its caches.
// It lives in this module so that the library never depends on
// client_golang; -tags nometrics builds it without, for a size comparison.
package main

import (
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
		name := cm.Name() + "-copy"
		if old, ok := secrets.Get(cm.Namespace(), name); ok && old.Decode(&s) == nil && maps.EqualFunc(s.Data, c.Data, sameBytes) {
			return nil
		}
		_, err := secrets.Apply(ctx, patch.Object("v1", "Secret", cm.Namespace(), name).ControlledBy(cm).
			Set(patch.Path("metadata", "labels", copyOf), cm.Name()).SecretStringData(c.Data))
		if err == nil {
			a.Eventf(cm, "Copied", "data copied to Secret %s", name)
		}
		return err
	}, secrets)
	return nil
}

func sameBytes(b []byte, s string) bool { return string(b) == s }
