package app_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/watchtest"
)

// A controller on the app: for each configmap labelled app, a secret it
// controls with the same data. Here it stops after its first write; a real
// program calls a.Main(setup) and runs until SIGTERM.
func Example() {
	s := watchtest.NewServer()
	defer s.Close()
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	s.AddResource(watchtest.Events, watchtest.Definition{})
	if _, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"web","namespace":"default","labels":{"app":"web"}},"data":{"greeting":"hello"}}`); err != nil {
		panic(err)
	}

	ctx, stop := context.WithCancel(context.Background())
	setup := func(a *app.App) error {
		cms := a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
		secrets := a.Watch(app.Secrets)
		a.Reconcile(cms, func(ctx context.Context, r *app.Request) error {
			cm, ok := r.Object()
			if !ok {
				return nil // gone: the garbage collector deletes its secret
			}
			data := map[string][]byte{}
			for k, v := range cm.Get("data").Map() {
				data[k] = []byte(v.String())
			}
			_, err := secrets.Apply(ctx, patch.Object("v1", "Secret", cm.Namespace(), cm.Name()).ControlledBy(cm).Set("data", data))
			stop() // enough for an example
			return err
		}, secrets)
		return nil
	}

	a := app.New("copier")
	a.Logger = slog.New(slog.DiscardHandler)
	err := a.Run(ctx, []string{"--server", s.URL, "--health-addr", ""}, setup)
	fmt.Println("run:", err)
	secret, _ := s.Get(watchtest.Secrets, "default", "web")
	fmt.Println(secret.Get("data").Raw, "owned by", secret.Get("metadata.ownerReferences.0.kind"))
	// Output:
	// run: <nil>
	// {"greeting":"aGVsbG8="} owned by ConfigMap
}
