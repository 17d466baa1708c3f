package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/snapshot"
)

// Main runs the program as a process: Run with the command line, until
// SIGINT or SIGTERM (a second one ends the process at once). It exits 0
// after a clean shutdown and for -h, and otherwise 1 after printing
// "name: error" on one line.
func (a *App) Main(setup func(*App) error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	context.AfterFunc(ctx, stop) // the next signal has its default effect: exit now
	err := a.Run(ctx, os.Args[1:], setup)
	stop()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", a.Name, err)
	os.Exit(1)
}

// Run parses args, connects, calls setup to wire the program, runs it
// until ctx ends or it cannot work, then shuts down within
// ShutdownTimeout (see the package doc for when it ends and why). It
// returns nil after a clean shutdown that ctx asked for.
func (a *App) Run(ctx context.Context, args []string, setup func(*App) error) error {
	a.mu.Lock()
	if a.running {
		a.mu.Unlock()
		return errors.New("app: Run called twice")
	}
	a.running = true
	a.leased = make(chan struct{})
	a.mu.Unlock()

	var kf kubeconfig.Flags
	a.register(&kf)
	if err := a.parse(args); err != nil {
		return err
	}
	a.defaults()
	cfg, where, stopDemo, err := a.connect(ctx, &kf)
	if err != nil {
		return fmt.Errorf("app: connect: %w", err)
	}
	defer stopDemo()
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return fmt.Errorf("app: connect: %w", err)
	}
	defer client.CloseIdleConnections()
	client.Logger = a.Logger
	a.client = client
	a.factory = listwatch.NewFactory(client)
	a.factory.Logger = a.Logger
	a.factory.Snapshot = snapshot.Options{Dir: a.SnapshotDir}
	a.recorder = events.New(client.Resource(events.Resource), a.Name, a.Identity)
	a.recorder.Logger = a.Logger

	if setup != nil {
		if err := setup(a); err != nil {
			return fmt.Errorf("app: setup: %w", err)
		}
	}
	if err := errors.Join(a.errs...); err != nil {
		return err
	}
	a.configureRunners()
	var metrics http.Handler
	if a.Metrics != nil {
		if metrics, err = a.Metrics(a); err != nil {
			return fmt.Errorf("app: metrics: %w", err)
		}
	}
	var ln net.Listener
	if a.HealthAddr != "" {
		if ln, err = net.Listen("tcp", a.HealthAddr); err != nil {
			return fmt.Errorf("app: health server: %w", err)
		}
	}
	return a.run(ctx, ln, metrics, where)
}

// configureRunners gives each runner the app's informers, workers,
// shutdown budget, logger, clock and, with LeaderElection, a candidacy.
func (a *App) configureRunners() {
	for _, r := range a.runners {
		// The app starts and stops the factory; a runner's Start of it
		// starts nothing more, and its Shutdown at the end of its Run
		// comes as the app's own does.
		r.Factory = a.factory
		r.Workers = a.Workers
		r.ShutdownTimeout = a.ShutdownTimeout / 2
		r.Logger, r.Clock = a.Logger, a.Clock
		if !a.LeaderElection {
			continue
		}
		r.Election = &leader.Config{
			Leases:          a.client.Resource(leases).Namespace(a.LeaseNamespace),
			Name:            r.Name,
			Identity:        a.Identity,
			ReleaseOnCancel: true,
			Logger:          a.Logger,
			Clock:           a.Clock,
			OnNewLeader: func(id string) {
				a.reachedLease()
				a.Logger.Info("app: leader", "app", a.Name, "lease", a.LeaseNamespace+"/"+r.Name, "leader", id, "self", id == a.Identity)
			},
			OnError: a.leaseFailed,
		}
	}
}

// reachedLease says a lease record was read or taken.
func (a *App) reachedLease() { a.leaseOnce.Do(func() { close(a.leased) }) }

// leaseFailed keeps the last failed lease request, for waitLease to say.
func (a *App) leaseFailed(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.leaseErr = err
}

// run runs the wired program; see Run.
func (a *App) run(ctx context.Context, ln net.Listener, metrics http.Handler, where string) error {
	bg := a.startBackground(ctx, ln, metrics, where)
	defer bg.stopShards()
	defer bg.stopRecorder()
	w := a.startWork(ctx)
	defer w.stop(nil)
	<-w.ctx.Done()
	return a.shutdown(w, bg)
}

// background is what runs beside the program's work and stops after it:
// the informers, the shards' own, the event recorder and the probe server.
type background struct {
	shards       sync.WaitGroup // the shards' informers
	stopShards   context.CancelFunc
	rest         sync.WaitGroup // the recorder and the probe server
	stopRecorder context.CancelFunc
	srv          *http.Server
}

// startBackground starts the informers, the event recorder and, with ln,
// the probe server; none of them stops with ctx, but in order at the
// shutdown.
func (a *App) startBackground(ctx context.Context, ln net.Listener, metrics http.Handler, where string) *background {
	bg := &background{}
	a.factory.Start(context.WithoutCancel(ctx)) // stopped by Shutdown, in order
	shardCtx, stopShards := context.WithCancel(context.WithoutCancel(ctx))
	bg.stopShards = stopShards
	for _, c := range a.sharded {
		bg.shards.Go(func() { c.inf.Run(shardCtx) })
	}
	recCtx, stopRecorder := context.WithCancel(context.WithoutCancel(ctx))
	bg.stopRecorder = stopRecorder
	bg.rest.Go(func() { a.recorder.Run(recCtx) })
	bg.srv = a.probeServer(metrics)
	if ln != nil {
		bg.rest.Go(func() { _ = bg.srv.Serve(ln) })
		a.Logger.Info("app: serving probes", "app", a.Name, "addr", ln.Addr().String(), "metrics", metrics != nil)
	}
	a.Logger.Info("app: started", "app", a.Name, "server", where, "identity", a.Identity,
		"caches", len(a.allCaches()), "leaderElection", a.LeaderElection, "shards", a.Shards)
	return bg
}

// probeServer serves the health handler. A client gets 10 s to send its
// request's headers, so that one that never finishes them holds no
// connection open for ever.
func (a *App) probeServer(metrics http.Handler) *http.Server {
	return &http.Server{Handler: a.health(metrics), ReadHeaderTimeout: 10 * time.Second}
}

// work is the program's own work: its runners, its Go functions and the
// lease wait. The first of them to fail ends them all, and its error is
// Run's.
type work struct {
	ctx    context.Context // ends with Run's, or at the first failure
	stop   context.CancelCauseFunc
	wg     sync.WaitGroup
	failed atomic.Pointer[error]
}

// end ends the work with err, unless err is nil or another failure came
// first.
func (w *work) end(err error) {
	if err != nil && w.failed.CompareAndSwap(nil, &err) {
		w.stop(err)
	}
}

// err is the failure that ended the work, nil if none did.
func (w *work) err() error {
	if p := w.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// startWork waits for the caches' first sync, then starts the runners,
// the Go functions and, under leader election or shards, the lease wait.
func (a *App) startWork(ctx context.Context) *work {
	w := &work{}
	w.ctx, w.stop = context.WithCancelCause(ctx)
	if err := a.waitSynced(ctx); err != nil {
		w.end(err)
	} else if ctx.Err() == nil {
		for _, r := range a.runners {
			w.wg.Go(func() { w.end(r.Run(w.ctx)) })
		}
		for _, fn := range a.gos {
			w.wg.Go(func() { w.end(fn(w.ctx)) })
		}
		if a.waitsForLease() {
			w.wg.Go(func() { w.end(a.waitLease(w.ctx)) })
		}
	}
	return w
}

// shutdown stops the work, then the informers (which save their
// snapshots), then the recorder and the probe server, in that order,
// within ShutdownTimeout, and returns Run's error: why the work ended,
// then whatever was still stopping at the deadline.
func (a *App) shutdown(w *work, bg *background) error {
	a.stopping.Store(true)
	var stage atomic.Value
	began := a.Clock.Now()
	next := func(s string) {
		a.Logger.Debug("app: shutting down", "app", a.Name, "stage", s, "after", a.Clock.Since(began))
		stage.Store(s)
	}
	next("runners and Go functions")
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.stop(nil)
		w.wg.Wait()
		next("informers (saving snapshots)")
		a.factory.Shutdown()
		bg.stopShards()
		bg.shards.Wait()
		next("event recorder and health server")
		bg.stopRecorder()
		sctx, cancel := context.WithCancel(context.Background())
		cancel() // close at once: probes have nothing left to learn
		_ = bg.srv.Shutdown(sctx)
		_ = bg.srv.Close()
		bg.rest.Wait()
		a.Logger.Debug("app: shut down", "app", a.Name, "took", a.Clock.Since(began))
	}()
	deadline := a.Clock.NewTimer(a.ShutdownTimeout)
	defer deadline.Stop()
	select {
	case <-done:
	case <-deadline.C():
		a.Logger.Error("app: shutdown did not finish in time; exiting with parts still running",
			"app", a.Name, "timeout", a.ShutdownTimeout, "waiting for", stage.Load())
		err := fmt.Errorf("%w (%v): still stopping %s", ErrShutdownTimeout, a.ShutdownTimeout, stage.Load())
		if failed := w.err(); failed != nil {
			err = errors.Join(failed, err) // why it stopped comes first
		}
		return err
	}
	return w.err()
}

// syncPoll is how often waitSynced looks at the caches: often enough
// that a program starts promptly, rarely enough to cost nothing.
const syncPoll = 50 * time.Millisecond

// waitSynced waits for every cache's first sync, at most SyncTimeout;
// it returns nil when ctx ends first (a shutdown, not a failure). It
// waits through errors retrying cannot cure: each informer has said
// its own at once, and goes on retrying, so a grant made meanwhile heals.
func (a *App) waitSynced(ctx context.Context) error {
	start := a.Clock.Now()
	timeout := a.Clock.NewTimer(a.SyncTimeout)
	defer timeout.Stop()
	poll := time.NewTicker(syncPoll) // real time: it paces looking, not waiting
	defer poll.Stop()
	for len(a.notSynced()) > 0 {
		select {
		case <-poll.C:
		case <-ctx.Done():
			return nil
		case <-timeout.C():
			err := fmt.Errorf("app: caches not synced within %v: %w", a.SyncTimeout, a.whyNotSynced())
			a.Logger.Error("app: giving up: the caches did not sync in time", "app", a.Name, "timeout", a.SyncTimeout, "err", err)
			return err
		}
	}
	a.Logger.Info("app: caches synced", "app", a.Name, "caches", len(a.allCaches()), "took", a.Clock.Since(start))
	return nil
}

// waitsForLease says whether Run waits for a lease record (waitLease):
// only runners take part in leader election or shards, so a program of Go
// functions alone, which run on every replica, has no lease to wait for.
func (a *App) waitsForLease() bool {
	return (a.LeaderElection || a.Shards) && len(a.runners) > 0
}

// waitLease ends the program when no candidate or member has seen a lease
// record within SyncTimeout of the caches' sync: a replica that can never lead
// is better restarted, and said, than left standing by.
func (a *App) waitLease(ctx context.Context) error {
	timeout := a.Clock.NewTimer(a.SyncTimeout)
	defer timeout.Stop()
	select {
	case <-a.leased:
		return nil
	case <-ctx.Done():
		return nil
	case <-timeout.C():
	}
	a.mu.Lock()
	last := a.leaseErr
	a.mu.Unlock()
	if last == nil {
		last = errors.New("no answer")
	}
	err := fmt.Errorf("app: no lease record read or taken in namespace %s within %v: %w", a.LeaseNamespace, a.SyncTimeout, last)
	a.Logger.Error("app: giving up: the lease could not be reached", "app", a.Name, "err", err)
	return err
}
