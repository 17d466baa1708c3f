// Package app is the composition root of a listwatch program: one value
// that owns the connection, the shared caches, the reconcile runners,
// leader election, an Event recorder, a health server, signals and an
// orderly, bounded shutdown, so that a program says only what it watches
// and what it does.
//
//	func main() { app.New("cm2secret").Main(setup) }
//
//	func setup(a *app.App) error {
//		cms := a.Watch(app.ConfigMaps, app.Options{Labels: "app"})
//		a.Reconcile(cms, func(ctx context.Context, r *app.Request) error {
//			cm, ok := r.Object() // the cached object, or gone
//			...
//		})
//		return nil
//	}
//
// Main parses the command line (kubeconfig.Flags and the app's own flags:
// --health-addr, --leader-elect, --shards, --lease-namespace, --identity,
// --snapshot-dir), connects, calls setup to wire the program, then runs it
// until SIGINT or SIGTERM, and exits 1 with one line when it cannot work.
// Run is the same without the process, for tests.
//
// Wiring is apart from running: setup names caches (Watch), reconcilers
// (Reconcile) and other work (Go); Run builds the informers, runners and
// elector from them and owns their order. A cache asked for twice with the
// same resource and options is one informer. With Shards each runner
// caches and reconciles only the keys its replica owns (package shard).
//
// When Run ends (decision 39 in docs/behaviour.md):
//   - at once, before anything runs, when the command line, the connection,
//     the health address or setup is wrong;
//   - when the caches have not synced within SyncTimeout (2 minutes, as
//     controller-runtime's cache sync timeout) — a 403 or a missing
//     resource is logged at Error at once by the informer, and Run keeps
//     waiting, so RBAC granted meanwhile heals the program;
//   - with LeaderElection or Shards, when no lease record could be read or
//     taken within SyncTimeout after the caches synced, when leadership is
//     lost (the process restarts as a fresh candidate) or when the server
//     has no Lease API;
//   - when a reconcile runner or a Go function returns an error;
//   - otherwise when its context ends (a signal): a failing write or a
//     failing watch after the first sync is logged once and retried, never
//     a reason to exit.
//
// Shutdown is bounded by ShutdownTimeout (20 s, under the 30 s a pod is
// given before SIGKILL). /readyz turns 503; the runners stop taking keys
// and their workers get half of it to drain (with an election they stop
// at once and the lease is released), and the Go functions' context ends;
// once all have returned the informers stop and save their snapshots, then
// the Event recorder and the health server stop. What is still running at
// the deadline is named at Error and Run returns ErrShutdownTimeout.
package app
