// Package listwatch keeps live, indexed, in-memory caches of Kubernetes-style
// API resources and tells your code about every change, without client-go.
//
// An Informer runs the pipeline
//
//	reflector.Reflector → delta.FIFO → indexer.Cache → processor.Processor → your handlers
//
// for one resource: the reflector lists and watches the server, the FIFO
// queues each object's changes, the indexer holds the cache, and the
// processor hands notifications to each handler on its own goroutine. A
// Factory shares informers between the parts of a program; a Lister reads a
// cache by label selector, name or namespace.
//
//	client, _ := httpwatch.NewClient(cfg)
//	f := listwatch.NewFactory(client)
//	pods := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})
//	pods.AddEventHandler(listwatch.HandlerFuncs{
//		UpdateFunc: func(old, pod *listwatch.Object) { queue.Add(listwatch.Key(pod)) },
//	})
//	f.Start(ctx)
//	if err := f.Wait(ctx); err != nil {
//		return err // why the cache is not synced: a 403, a dead URL, a bad selector
//	}
//	running, _ := pods.Lister().List("app=web")
//
// A list or watch that fails is logged once, at Warn, or at Error with what
// to do when retrying cannot cure it (a 401, a 403, a resource the server
// does not serve, a field selector it does not support), and the waits
// return the reason; a healthy program logs nothing above Debug. The
// informers retry regardless, so a fix made later heals them.
//
// One wait, Wait (on an Informer or a Factory, decision 37), returns nil
// once the cache is synced with the server (after a warm start, once the
// server confirmed the restored snapshot), and at once why not when
// waiting cannot end well: an error retrying cannot cure (a 403, a
// misspelt resource, a wrong CA), nothing started, the informer stopped.
// HasSynced is the same state as a predicate, for health checks.
//
// Typed[T] reads a cache as the program's own type (or k8s.io/api's),
// decoding each object once per resourceVersion.
//
// Objects are *raw.Object: the raw JSON the server sent (by default
// without metadata.managedFields), read with gjson paths or decoded on
// demand. They are shared by the cache, the handlers and the listers, and
// never modified.
//
// The behaviour follows client-go's shared informer; Informer's doc lists
// where it deliberately differs.
package listwatch
