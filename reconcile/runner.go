package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/shard"
)

// Func reconciles the object of key ("namespace/name", or "name" for a
// cluster-scoped object) with the world, reading it from the informer's
// cache. It is called for different keys at once, never twice at once for
// the same key. ctx ends when the work must stop: leadership lost, the key
// moved to another shard, or the shutdown deadline passed.
type Func func(ctx context.Context, key string) (Result, error)

// Result says what to do with a key after a successful reconcile. The zero
// Result forgets the key until its object changes.
type Result struct {
	// Requeue reconciles the key again after the Limiter's backoff, as an
	// error would, without counting as a failure in Observe.
	Requeue bool
	// RequeueAfter, if positive, reconciles the key again after this long;
	// it forgets the key's failures and takes precedence over Requeue.
	RequeueAfter time.Duration
}

// Outcome is how a reconcile ended, for Observe. The values are
// controller-runtime's result labels, so a metric may use them as they
// are.
type Outcome string

const (
	Success      Outcome = "success"       // forgotten until its object changes
	Requeue      Outcome = "requeue"       // Result.Requeue: back after the Limiter's backoff
	RequeueAfter Outcome = "requeue_after" // Result.RequeueAfter: back at that time
	// Error is every failure, retried after a backoff; a panic in
	// Reconcile is one too. OnError tells a panic: IsPanic(err).
	Error Outcome = "error"
)

// ErrDrainTimeout is returned by Run when workers were still busy
// ShutdownTimeout after the shutdown began.
var ErrDrainTimeout = errors.New("reconcile: workers did not finish within the shutdown timeout")

// Default values New fills in.
const (
	DefaultWorkers         = 1
	DefaultShutdownTimeout = 30 * time.Second
)

// Runner reconciles the keys of an informer. Set its fields before Run;
// Run takes them once.
type Runner struct {
	// Name names the work queue in QueueMetrics and the runner in logs.
	// Empty means For.Name(): its identity (decision 41).
	Name string
	// For is the informer whose objects' keys are reconciled. Required.
	For *listwatch.Informer
	// Watches map changes of other objects to keys to reconcile.
	Watches []Watch
	// Factory, if set, is started by Run instead of running the informers
	// one by one, and shut down once the workers have stopped: Run owns
	// it, so do not Start it yourself. For and the watched informers
	// should be its own.
	Factory *listwatch.Factory
	// Reconcile is called for each key. Required.
	Reconcile Func
	// Workers is how many keys are reconciled at once.
	Workers int
	// Limiter spaces out the retries of a key that fails. Nil means
	// ratelimit.DefaultControllerRateLimiter, reading Clock.
	Limiter ratelimit.Limiter[string]
	// ShutdownTimeout bounds how long, once Run's context is done, workers
	// may go on with the keys queued and in hand before their context is
	// cancelled and Run returns ErrDrainTimeout.
	ShutdownTimeout time.Duration

	// Election, if set, makes the runner a candidate: it reconciles only
	// while it leads. Run sets OnStartedLeading; the others are kept. It
	// is a Config, not an Elector, because the runner owns the elector's
	// leading callbacks.
	Election *leader.Config
	// Member, if set, is run by Run (OnChange should relist For), and each
	// key is reconciled only once Member.Acquire hands it out. It is a
	// built Member, not a Config, because the informers the runner reads
	// share it (Member.Source) before Run starts.
	Member *shard.Member

	// Observe, if set, is called after each reconcile with its key, how
	// long it took and how it ended (Error for every failure). Keep it
	// quick.
	Observe func(key string, took time.Duration, outcome Outcome)
	// OnError, if set, sees every failed reconcile with its key and error
	// (a panic included, for which IsPanic is true; lost races too; not a
	// reconcile cut off by the end of its context), for metrics by kind
	// of failure. The log says each kind of failure once (decision 20).
	// Keep it quick.
	OnError func(key string, err error)
	// QueueMetrics receives the work queue's events: depth, latency,
	// retries (see ratelimit.Metrics).
	QueueMetrics ratelimit.Metrics

	Logger *slog.Logger
	Clock  clock.Clock

	mu       sync.Mutex
	started  bool
	queue    *ratelimit.Queue[string] // nil while not taking keys
	forced   map[string]bool          // keys to reconcile even if unchanged
	done     map[string]string        // key → resourceVersion last reconciled
	inFlight map[string]bool          // keys being reconciled
	due      map[string]time.Time     // key → when RequeueAfter asked for it
	failing  map[string]bool          // keys whose last reconcile failed
	failures faillog.Tracker

	synced   atomic.Bool
	leading  atomic.Bool
	runErr   atomic.Pointer[error]
	elector  atomic.Pointer[leader.Elector]
	handlers []func() // removes the handlers Run added
}

// New returns a Runner of fn over the keys of informer, with defaults
// filled in: one worker, the default limiter, a 30 s shutdown timeout,
// slog.Default() and the real clock.
func New(informer *listwatch.Informer, fn Func) *Runner {
	return &Runner{
		For:             informer,
		Reconcile:       fn,
		Workers:         DefaultWorkers,
		ShutdownTimeout: DefaultShutdownTimeout,
		Logger:          slog.Default(),
		Clock:           clock.Real,
	}
}

// Run starts the informers, waits for their first lists and reconciles
// until ctx is done (see the package doc), then shuts down in order: no
// new keys, the workers drain the queue within ShutdownTimeout, the
// informers stop. It returns nil after a clean shutdown, ErrDrainTimeout
// after an unclean one, the reason the informers could not sync, with
// Election an error wrapping leader.ErrLost once it stopped leading, or,
// with Member, the member's error once its membership ended on its own
// (shard.ErrNotServed: the server has no Lease API).
func (r *Runner) Run(ctx context.Context) error {
	if err := r.start(); err != nil {
		return err
	}
	infCtx, stopInformers := context.WithCancel(context.WithoutCancel(ctx))
	var bg sync.WaitGroup
	defer func() { stopInformers(); bg.Wait(); r.removeHandlers() }()
	r.runInformers(infCtx, &bg)
	// A membership that ends on its own (leases not served) will never
	// hand out a key: the runner stops too, and says why.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var memberErr atomic.Pointer[error]
	if r.Member != nil {
		bg.Go(func() {
			if err := r.Member.Run(infCtx); err != nil {
				err = fmt.Errorf("reconcile: shard membership ended: %w", err)
				memberErr.Store(&err)
				stop()
			}
		})
	}
	err := r.waitForSync(ctx)
	if err == nil {
		r.synced.Store(true)
		defer r.synced.Store(false)
		if r.Election == nil {
			err = r.term(ctx, true)
		} else {
			err = r.lead(ctx)
		}
	}
	if m := memberErr.Load(); m != nil {
		err = *m
	}
	return r.fail(err)
}

// start checks the fields and registers the handlers, once.
func (r *Runner) start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.started:
		return errors.New("reconcile: Run called twice")
	case r.For == nil:
		return errors.New("reconcile: Runner.For is nil")
	case r.Reconcile == nil:
		return errors.New("reconcile: Runner.Reconcile is nil")
	}
	for i, w := range r.Watches {
		if w.Informer == nil || w.Keys == nil {
			return fmt.Errorf("reconcile: Watches[%d] needs an Informer and Keys", i)
		}
	}
	r.started = true
	r.Workers = max(r.Workers, 1)
	if r.ShutdownTimeout <= 0 {
		r.ShutdownTimeout = DefaultShutdownTimeout
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.Clock == nil {
		r.Clock = clock.Real
	}
	if r.Name == "" {
		r.Name = r.For.Name()
	}
	r.failures = faillog.Tracker{Logger: r.Logger, Clock: r.Clock}
	r.failing = map[string]bool{}
	r.forced = map[string]bool{}
	r.done = map[string]string{}
	r.inFlight = map[string]bool{}
	r.due = map[string]time.Time{}
	return r.addHandlers()
}

// informers returns For and the watched informers, each once.
func (r *Runner) informers() []*listwatch.Informer {
	infs := []*listwatch.Informer{r.For}
	for _, w := range r.Watches {
		dup := false
		for _, i := range infs {
			dup = dup || i == w.Informer
		}
		if !dup {
			infs = append(infs, w.Informer)
		}
	}
	return infs
}

func (r *Runner) runInformers(ctx context.Context, bg *sync.WaitGroup) {
	if r.Factory != nil {
		r.Factory.Start(ctx)
		bg.Go(func() { <-ctx.Done(); r.Factory.Shutdown() })
		return
	}
	for _, inf := range r.informers() {
		bg.Go(func() { inf.Run(ctx) })
	}
}

func (r *Runner) waitForSync(ctx context.Context) error {
	for _, inf := range r.informers() {
		if err := inf.Wait(ctx); err != nil {
			return fmt.Errorf("reconcile: wait for caches: %w", err)
		}
	}
	return nil
}

// lead takes part in the election and runs a term while leading.
func (r *Runner) lead(ctx context.Context) error {
	cfg := *r.Election
	if cfg.Clock == nil {
		cfg.Clock = r.Clock
	}
	var termErr error
	cfg.OnStartedLeading = func(lctx context.Context) {
		r.leading.Store(true)
		defer r.leading.Store(false)
		// Stop at once, shutting down or not: the next leader reconciles
		// whatever is left, and acting on after the lease may have gone
		// would break the one-leader promise.
		termErr = r.term(lctx, false)
	}
	el, err := leader.New(cfg)
	if err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	r.elector.Store(el)
	if err := el.Run(ctx); err != nil {
		return fmt.Errorf("reconcile: %w", err)
	}
	return termErr
}

func (r *Runner) fail(err error) error {
	if err != nil {
		r.runErr.Store(&err)
	}
	return err
}
