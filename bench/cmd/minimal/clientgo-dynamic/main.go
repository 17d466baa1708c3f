// Command clientgo-dynamic is the smallest useful program with client-go's
// dynamic informer: it syncs a cache of pods and prints how many it holds.
// The benchmark weighs its stripped binary.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func main() {
	client, err := dynamic.NewForConfig(&rest.Config{Host: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(client, 0)
	inf := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	fmt.Println(len(inf.GetStore().List()))
}
