package listwatch_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// A shared informer over a fake API server: sync, then read the cache.
func Example() {
	server := watchtest.NewServer()
	defer server.Close()
	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"shop","labels":{"app":"web"}}}`)
	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"db-1","namespace":"shop","labels":{"app":"db"}}}`)

	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	defer client.CloseIdleConnections()
	factory := listwatch.NewFactory(client)
	pods := factory.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})

	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx)
	if err := factory.Wait(ctx); err != nil {
		panic(err)
	}

	web, _ := pods.Lister().List("app=web")
	for _, p := range web {
		fmt.Println(listwatch.Key(p), p.ResourceVersion())
	}
	cancel()
	factory.Shutdown()
	// Output: shop/web-1 2
}
