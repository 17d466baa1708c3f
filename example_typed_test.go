package listwatch_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
)

// Pod is the part of a pod this program reads: its own struct, or
// k8s.io/api/core/v1.Pod in a program that imports it.
type Pod struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		NodeName string `json:"nodeName"`
	} `json:"spec"`
}

// A typed lister reads the cache as the program's own type, each object
// decoded once per resourceVersion however often it is read.
func ExampleTyped() {
	server, client := fakeCluster()
	defer server.Close()
	defer client.CloseIdleConnections()
	factory := listwatch.NewFactory(client)
	pods := listwatch.Typed[Pod](factory.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	factory.Start(ctx)
	if err := factory.Wait(ctx); err != nil {
		panic(err)
	}

	pod, err := pods.Get("shop", "web-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.Metadata.Name, "runs on", pod.Spec.NodeName)
	web, _ := pods.List("app=web")
	var nodes []string
	for _, p := range web {
		nodes = append(nodes, p.Metadata.Namespace+"/"+p.Metadata.Name+"@"+p.Spec.NodeName)
	}
	slices.Sort(nodes)
	fmt.Println(nodes)
	cancel()
	factory.Shutdown()
	// Output:
	// web-1 runs on node-a
	// [blog/web-1@node-b shop/web-1@node-a shop/web-2@node-b]
}
