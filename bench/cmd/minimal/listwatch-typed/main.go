// Command listwatch-typed is cmd/minimal/listwatch decoding each cached
// pod into k8s.io/api's corev1.Pod with Object.Decode: the benchmark
// weighs what typed objects add to a stripped binary.
package main

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

func main() {
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := listwatch.NewFactory(client)
	inf := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	_, _ = inf.AddEventHandler(listwatch.HandlerFuncs{AddFunc: func(*listwatch.Object, bool) {}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx)
	if err := f.Wait(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	running := 0
	for _, o := range inf.Indexer().List() {
		var pod corev1.Pod
		if err := o.Decode(&pod); err == nil && pod.Status.Phase == corev1.PodRunning {
			running++
		}
	}
	fmt.Println(len(inf.Indexer().List()), running)
}
