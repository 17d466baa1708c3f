// Package prommetrics exports what a listwatch program measures as
// Prometheus metrics, under the names client-go and controller-runtime
// use, so that the dashboards and alerts already written for those read
// a listwatch controller unchanged; and, under listwatch_, what an
// operator of an agent needs and neither exports: the health of each
// cache and of its warm start, and of a cache served onwards.
//
// It is a module of its own, so that the library does not depend on
// client_golang: a program that wants the metrics adds one import and one
// call, before Run:
//
//	reg := prometheus.NewRegistry()
//	if err := prommetrics.Register(reg, prommetrics.Sources{Runners: []*reconcile.Runner{runner}}); err != nil {
//		return err
//	}
//	http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
//
// A runner brings its factory (or its informers) and the factory its
// client; Sources names them for a program without a runner. A program
// built on package app needs one line: a.Metrics = prommetrics.Handler.
//
// # Names
//
// Labels: workqueue_* carry name and controller, both the runner's Name,
// as controller-runtime's do (client-go's carry name only);
// controller_runtime_* carry controller; rest_client_* carry host, the
// API server's host:port; listwatch_informer_* and listwatch_snapshot_*
// carry informer (its Name: its identity, "pods.v1 in ns (labels
// app=web)", told apart with "#2" as its logs are, decision 41), resource
// ("pods.v1", "deployments.v1.apps") and namespace; listwatch_served_*
// carry none but their own (f). Two informers of one name fail the
// scrape, naming it.
//
//	name                                             source hook                         differs from its peer
//	workqueue_depth                                  ratelimit.Metrics Added/Started     -
//	workqueue_adds_total                             ratelimit.Metrics Added             -
//	workqueue_queue_duration_seconds                 ratelimit.Metrics Started           -
//	workqueue_work_duration_seconds                  ratelimit.Metrics Finished          -
//	workqueue_unfinished_work_seconds                ratelimit.Metrics Unfinished        updated at least every 10 s (a)
//	workqueue_longest_running_processor_seconds      ratelimit.Metrics Unfinished        updated at least every 10 s (a)
//	workqueue_retries_total                          ratelimit.Metrics Retried           every delayed add (b)
//	rest_client_requests_total{code,method,host}     httpwatch.Client.Metrics            -
//	rest_client_request_duration_seconds{verb,host}  httpwatch.Client.Metrics            per attempt, to the headers (c)
//	controller_runtime_reconcile_total{result}       reconcile.Runner.Observe            unchanged keys skipped (d)
//	controller_runtime_reconcile_errors_total        reconcile.Runner.Observe            -
//	controller_runtime_reconcile_panics_total        reconcile.Runner.OnError, IsPanic   -
//	controller_runtime_reconcile_time_seconds        reconcile.Runner.Observe            -
//	controller_runtime_active_workers                ratelimit.Metrics Started/Finished  -
//	controller_runtime_max_concurrent_reconciles     reconcile.Runner.Workers            -
//	leader_election_master_status{name}              reconcile.Runner.Leading            name is the Lease's name (e)
//	listwatch_informer_synced                        Informer.HasSynced                  (no peer)
//	listwatch_informer_restored_objects              Informer.Stats Snapshot.Restored    (no peer; decision 32)
//	listwatch_informer_objects                       Informer.Stats Objects              (no peer)
//	listwatch_informer_bytes                         the cache, summed on each scrape    (no peer)
//	listwatch_informer_queued                        Informer.Stats Queued               (no peer)
//	listwatch_informer_last_sync_timestamp_seconds   reflector.Stats LastSync            (no peer)
//	listwatch_informer_sync_errors_total{kind}       reflector.Stats *Errors             (no peer)
//	listwatch_informer_watch_restarts_total{cause}   reflector.Stats WatchEnds           (no peer; decision 36)
//	listwatch_informer_lists_total                   reflector.Stats Lists               (no peer)
//	listwatch_informer_watches_total                 reflector.Stats Watches             (no peer)
//	listwatch_informer_events_total                  reflector.Stats Events              (no peer)
//	listwatch_informer_handler_panics_total          Informer.Stats HandlerPanics        (no peer)
//	listwatch_snapshot_last_save_timestamp_seconds   Informer.Stats Snapshot.Saved       (no peer; decision 32)
//	listwatch_snapshot_bytes                         Informer.Stats Snapshot.Bytes       (no peer)
//	listwatch_snapshot_save_duration_seconds         Informer.Stats Snapshot.Took        (no peer; the last save)
//	listwatch_snapshot_save_failures_total           Informer.Stats Snapshot.Failures    (no peer)
//	listwatch_served_stale                           cacheserve.Server.Stats Stale       (no peer; decision 45)
//	listwatch_served_last_heard_timestamp_seconds    cacheserve.Server.Stats LastHeard   (no peer)
//	listwatch_served_stale_seconds                   cacheserve.Server.Stats LastHeard   (no peer; 0 while current) (f)
//	listwatch_served_held_relists_total              cacheserve.Server.Stats HeldRelists (no peer; decision 45)
//	listwatch_served_proxied_requests_total{outcome} cacheserve.Server.Stats Proxy       (no peer) (f)
//	listwatch_served_reviews_total                   cacheserve.Reviewer.Stats Reviews   (no peer; the decision cache's misses)
//	listwatch_served_review_cache_hits_total{state}  cacheserve.Reviewer.Stats Cached/Offline (no peer) (f)
//	listwatch_served_review_coalesced_total          cacheserve.Reviewer.Stats Coalesced (no peer)
//	listwatch_served_denied_total                    cacheserve.Reviewer.Stats Denied    (no peer)
//
// Buckets are the peers': controller-runtime's for the workqueue (10 ns
// to 1000 s by tens; client-go's first ten are the same) and for
// reconcile time, client-go's for request duration.
//
// Where the meaning differs, and why:
//
//   - (a) client-go's workqueue refreshes these two gauges every half
//     second from a goroutine of its own; the queue here reports them
//     each time its one goroutine wakes, at least every 10 s, which is
//     soon enough to see a stuck worker and costs no extra timer.
//   - (b) client-go counts AddRateLimited; this queue does not know why an
//     item is delayed, so every delayed add counts: a failure's retry and
//     Requeue as upstream, but RequeueAfter too.
//   - (c) Each attempt of a retried request is observed (client-go times
//     the request with its retries), up to the response headers (client-go
//     reads the body too). Watches are counted in rest_client_requests_total
//     but not timed, as in client-go.
//   - (d) The results are reconcile.Outcome's values: success, requeue
//     (Result.Requeue), requeue_after (Result.RequeueAfter, which wins
//     when both are set) and error. A panic counts as result="error" and
//     in controller_runtime_reconcile_errors_total, as upstream, and in
//     controller_runtime_reconcile_panics_total, which reads the error
//     OnError sees (reconcile.IsPanic). A key the runner skips because its
//     object did not change since its last reconcile is not a reconcile
//     (decision 29).
//   - (e) Reported for runners with an Election; 1 while the runner leads.
//   - (f) For a node cache (Sources.Served, Sources.Reviewer; decision
//     45), read from Stats on each scrape, without labels: one server
//     per registry. The informers it serves are reported in
//     listwatch_informer_* with the others, unnamed in Sources. listwatch_served_stale_seconds is the seconds since
//     the API server was last heard from, on the Server's Clock, while
//     stale; a cache that has heard nothing since it started (a warm
//     start offline) counts from Register. Proxied outcomes: forwarded
//     (sent to the API server), unreachable (of those, the ones it did
//     not answer: 503 or 504), refused (unsent: the client had no bearer
//     token of its own); present only with a Proxy. Review cache hits:
//     fresh (within the decision's TTL) and offline (past it, the API
//     server unreachable, younger than MaxStale); a request counts a
//     token's lookup and a request's, so one request is two.
//
// The listwatch_* series are read from Stats on each scrape: an informer
// a factory makes later appears at the next scrape, and nothing is
// counted on the informers' own paths. listwatch_informer_bytes sums the
// JSON of the cached objects under the cache's read lock, about a
// millisecond per 100,000 objects. The snapshot series are there for
// informers with a Snapshot.Dir. On a healthy informer
// listwatch_informer_last_sync_timestamp_seconds is never older than its
// longest watch timeout (10 minutes by default), so an alert on
// time() - it > 15m finds a cache that stopped hearing from its server.
package prommetrics
