package listwatch_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/selector"
	"github.com/listwatch/listwatch/watchtest"
)

// fakeCluster is a fake API server holding a few pods, and a client of it.
func fakeCluster() (*watchtest.Server, *httpwatch.Client) {
	server := watchtest.NewServer()
	for _, p := range []string{
		`{"metadata":{"name":"web-1","namespace":"shop","labels":{"app":"web"}},"spec":{"nodeName":"node-a"}}`,
		`{"metadata":{"name":"web-2","namespace":"shop","labels":{"app":"web"}},"spec":{"nodeName":"node-b"}}`,
		`{"metadata":{"name":"db-1","namespace":"shop","labels":{"app":"db"}},"spec":{"nodeName":"node-a"}}`,
		`{"metadata":{"name":"web-1","namespace":"blog","labels":{"app":"web"}},"spec":{"nodeName":"node-b"}}`,
	} {
		if _, err := server.Create(watchtest.Pods, p); err != nil {
			panic(err)
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	if err != nil {
		panic(err)
	}
	return server, client
}

func keys(objs []*listwatch.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, listwatch.Key(o))
	}
	slices.Sort(out)
	return out
}

// One factory shares informers between the parts of a program: asking twice
// for a resource gives the same informer, and Start runs them all.
func ExampleFactory() {
	server, client := fakeCluster()
	defer server.Close()
	defer client.CloseIdleConnections()

	factory := listwatch.NewFactory(client)
	factory.Namespace = "shop" // every informer's default namespace
	pods := factory.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	same := factory.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	factory.Start(ctx)
	if err := factory.Wait(ctx); err != nil {
		panic(err)
	}
	fmt.Println(pods.Reflector.Name, "synced:", pods.HasSynced())
	fmt.Println("shared:", pods == same, "cached:", pods.Stats().Objects)
	cancel()
	factory.Shutdown()
	// Output:
	// pods.v1 in shop synced: true
	// shared: true cached: 3
}

// A Lister reads the cache by label selector, across namespaces or in one.
// A selector used often is parsed once and given to Select.
func ExampleLister() {
	server, client := fakeCluster()
	defer server.Close()
	defer client.CloseIdleConnections()
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	if err := inf.Wait(ctx); err != nil {
		panic(err)
	}

	lister := inf.Lister()
	web, err := lister.List("app=web")
	if err != nil {
		panic(err)
	}
	fmt.Println(keys(web))
	notWeb, err := selector.Parse("app!=web")
	if err != nil {
		panic(err)
	}
	fmt.Println(keys(lister.Select(notWeb)))
	pod, err := lister.ByNamespace("blog").Get("web-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.Namespace(), pod.Name())
	_, err = lister.ByNamespace("blog").Get("db-1")
	fmt.Println("not found:", httpwatch.IsNotFound(err))
	cancel()
	<-done
	// Output:
	// [blog/web-1 shop/web-1 shop/web-2]
	// [shop/db-1]
	// blog web-1
	// not found: true
}

// An index answers "which objects have this value" without a scan: here,
// the pods on each node.
func ExampleInformer_AddIndexers() {
	server, client := fakeCluster()
	defer server.Close()
	defer client.CloseIdleConnections()
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	err := inf.AddIndexers(indexer.Indexers[*listwatch.Object]{
		"node": func(p *listwatch.Object) ([]string, error) {
			return []string{p.Get("spec.nodeName").String()}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	if err := inf.Wait(ctx); err != nil {
		panic(err)
	}

	onA, err := inf.Indexer().ByIndex("node", "node-a")
	if err != nil {
		panic(err)
	}
	fmt.Println(keys(onA))
	cancel()
	<-done
	// Output: [shop/db-1 shop/web-1]
}
