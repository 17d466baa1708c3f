// Package reconcile runs a controller's reconcile function over the keys of
// an informer: the work queue, the workers, retries with backoff per key,
// owned and mapped objects, leader election or shards, a health endpoint and
// an orderly shutdown, configured through a Runner's fields.
//
// Minimal use:
//
//	cms := factory.ForResource(httpwatch.Resource{Version: "v1", Resource: "configmaps"})
//	r := reconcile.New(cms, func(ctx context.Context, key string) (reconcile.Result, error) {
//		// read the object of key from cms.Lister(), act, and say what next
//		return reconcile.Result{}, nil
//	})
//	r.Workers = 4
//	r.Watches = []reconcile.Watch{{Informer: reports, Keys: reconcile.ControllerOf("", "ConfigMap")}}
//	http.Handle("/", r.Health()) // /readyz, /livez
//	return r.Run(ctx)
//
// Run starts the informers, waits for their first lists, queues every cached
// key and reconciles until ctx is done. A key is in one worker's hands at a
// time; an error or Result.Requeue retries it after the Limiter's backoff for
// that key, a success forgets its failures, Result.RequeueAfter reconciles it
// again later. On shutdown the runner takes no new keys, lets the workers
// finish the queued ones within ShutdownTimeout, then stops the informers.
//
// A failing reconcile is logged as a failing list is (decision 20): the
// first failure of each kind at Warn, or at Error with what to do when
// retrying cannot cure it (a 403 names the verb and resource to grant),
// repeats counted, the recovery once at Info. Observe hears how each
// reconcile ended (Success, Requeue, RequeueAfter or Error: the results
// controller-runtime counts); OnError sees every failure, and IsPanic
// tells the panics among them.
//
// With Election set the runner reconciles only while it leads (package
// leader) and Run returns an error wrapping leader.ErrLost when it stops
// leading; with Member set each key is reconciled only by the replica that
// owns it (package shard).
//
// Differences from controller-runtime, on purpose (docs/behaviour.md):
//   - A notification of an object at the resourceVersion last reconciled
//     successfully is not reconciled again (decision 29); requeues, errors,
//     resyncs and watched objects still are.
//   - Informers run while the replica follows, so a new leader starts on a
//     warm cache; the queue exists only while leading and a gained
//     leadership queues every cached key (decision 30).
package reconcile
