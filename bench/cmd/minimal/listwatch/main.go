// Command listwatch is the smallest useful program with a listwatch
// informer: it syncs a cache of pods and prints how many it holds. The
// benchmark weighs its stripped binary.
package main

import (
	"context"
	"fmt"
	"os"

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
	fmt.Println(len(inf.Indexer().List()))
}
