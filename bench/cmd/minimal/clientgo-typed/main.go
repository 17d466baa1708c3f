// Command clientgo-typed is the smallest useful program with client-go's
// typed pod informer: it syncs a cache of pods and prints how many it holds.
// The benchmark weighs its stripped binary.
package main

import (
	"context"
	"fmt"
	"os"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func main() {
	client, err := kubernetes.NewForConfig(&rest.Config{Host: os.Args[1]})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Core().V1().Pods().Informer()
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	f.Start(ctx.Done())
	cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
	fmt.Println(len(inf.GetStore().List()))
}
