// Command clientgo-dynamic is the benchmark's reference client: client-go's
// dynamic shared informer of pods (unstructured objects), with one handler
// that counts notifications. See internal/measure for what it reports.
package main

import (
	"context"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/bench/internal/measure"
)

func main() {
	// All clients sync by a paged list, not a watch-list stream (client-go
	// reads this variable the first time it looks at a feature gate).
	if _, set := os.LookupEnv("KUBE_FEATURE_WatchListClient"); !set {
		os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	}
	measure.Main("client-go dynamic", func(ctx context.Context, host string, c *measure.Counter) (measure.Synced, error) {
		client, err := dynamic.NewForConfig(&rest.Config{Host: host})
		if err != nil {
			return nil, err
		}
		f := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
		inf := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Informer()
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { c.Add() },
			UpdateFunc: func(any, any) { c.Update() },
			DeleteFunc: func(any) { c.Delete() },
		}); err != nil {
			return nil, err
		}
		f.Start(ctx.Done())
		return inf.HasSynced, nil
	})
}
