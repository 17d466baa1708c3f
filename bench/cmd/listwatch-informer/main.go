// Command listwatch-informer is the benchmark's listwatch client: a
// listwatch informer of pods from a Factory, with one handler that counts
// notifications. By default the factory drops metadata.managedFields while
// reading, as listwatch does unless told otherwise; -keep-managed-fields
// caches objects whole, the same data the client-go informers keep;
// -projected caches only what a typical controller reads (labels, owner
// references, spec.nodeName, status.phase) through a Projection. See
// internal/measure for what it reports.
package main

import (
	"context"
	"errors"
	"flag"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/bench/internal/measure"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
)

func main() {
	keep := flag.Bool("keep-managed-fields", false, "cache metadata.managedFields too")
	projected := flag.Bool("projected", false, "cache only labels, owner references, spec.nodeName and status.phase")
	flag.Parse()
	name := "listwatch (default: managedFields dropped)"
	switch {
	case *keep:
		name = "listwatch (managedFields kept)"
	case *projected:
		name = "listwatch (projected: labels, owners, node, phase)"
	}
	measure.Main(name, func(ctx context.Context, host string, c *measure.Counter) (measure.Synced, error) {
		if *keep && *projected {
			return nil, errors.New("-keep-managed-fields and -projected exclude each other")
		}
		client, err := httpwatch.NewClient(&kubeconfig.Config{Host: host})
		if err != nil {
			return nil, err
		}
		var projection *raw.Projection
		if *projected {
			projection, err = raw.NewProjection("metadata.labels", "metadata.ownerReferences", "spec.nodeName", "status.phase")
			if err != nil {
				return nil, err
			}
		}
		f := listwatch.NewFactory(client)
		f.KeepManagedFields = *keep
		// All clients sync by a paged list, not a watch-list stream.
		f.Configure = func(_ httpwatch.Resource, inf *listwatch.Informer) { inf.Reflector.PagedList = true }
		inf := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"}, listwatch.Selector{Projection: projection})
		if _, err := inf.AddEventHandler(listwatch.HandlerFuncs{
			AddFunc:    func(*listwatch.Object, bool) { c.Add() },
			UpdateFunc: func(_, _ *listwatch.Object) { c.Update() },
			DeleteFunc: func(*listwatch.Object, bool) { c.Delete() },
		}); err != nil {
			return nil, err
		}
		f.Start(ctx)
		return inf.HasSynced, nil
	})
}
