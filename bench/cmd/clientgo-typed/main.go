// Command clientgo-typed is the benchmark's second reference client:
// client-go's typed shared informer of pods (*corev1.Pod), with one handler
// that counts notifications. See internal/measure for what it reports.
package main

import (
	"context"
	"os"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
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
	measure.Main("client-go typed", func(ctx context.Context, host string, c *measure.Counter) (measure.Synced, error) {
		// JSON, like the other clients and like the fake server speaks.
		client, err := kubernetes.NewForConfig(&rest.Config{Host: host, ContentConfig: rest.ContentConfig{
			ContentType: "application/json", AcceptContentTypes: "application/json"}})
		if err != nil {
			return nil, err
		}
		f := informers.NewSharedInformerFactory(client, 0)
		inf := f.Core().V1().Pods().Informer()
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
