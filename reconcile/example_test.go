package reconcile_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/watchtest"
)

// A runner over the configmaps of a test server: each is reconciled once,
// then the runner shuts down.
func Example() {
	s := watchtest.NewServer()
	defer s.Close()
	for _, name := range []string{"a", "b"} {
		_, _ = s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"`+name+`","namespace":"ns"}}`)
	}
	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	defer client.CloseIdleConnections()

	// Run returns at this deadline at the latest: a broken example fails,
	// not hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cms := listwatch.NewInformer(client.Resource(watchtest.ConfigMaps), 0)
	done := make(chan string, 2)
	r := reconcile.New(cms, func(ctx context.Context, key string) (reconcile.Result, error) {
		done <- key
		return reconcile.Result{}, nil
	})
	go func() {
		seen := map[string]bool{<-done: true, <-done: true}
		fmt.Println(seen["ns/a"], seen["ns/b"])
		cancel()
	}()
	fmt.Println("run:", r.Run(ctx))
	// Output:
	// true true
	// run: <nil>
}
