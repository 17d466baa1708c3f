package shard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
)

func Example() {
	srv := watchtest.NewServer()
	defer srv.Close()
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	for _, name := range []string{"a", "b", "c"} {
		srv.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"}}`, name))
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()
	// Every wait ends at this deadline: a broken example fails, not hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	joined := make(chan []string, 1)
	m, err := shard.New(shard.Config{
		Leases: client.Resource(httpwatch.Resource{Group: "coordination.k8s.io",
			Version: "v1", Resource: "leases", Namespace: "default"}),
		Group:    "example",
		Identity: "replica-1",
		OnChange: func(members []string) { joined <- members },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan error)
	go func() { done <- m.Run(ctx) }()
	select {
	case members := <-joined:
		fmt.Println("members:", members) // alone: every key is ours
	case <-ctx.Done():
		fmt.Println(ctx.Err())
		return
	}

	inf := listwatch.NewInformer(m.Source(client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"})), 0)
	go inf.Run(ctx)
	if err := inf.Wait(ctx); err != nil {
		fmt.Println("not synced:", err)
		return
	}
	fmt.Println("cached:", inf.Indexer().Len())

	kctx, release, err := m.Acquire(ctx, "ns/a")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("reconciling ns/a:", kctx.Err() == nil)
	release()
	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// members: [replica-1]
	// cached: 3
	// reconciling ns/a: true
	// run: <nil>
}
