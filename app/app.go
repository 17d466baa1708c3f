package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reconcile"
)

// Default values New fills in.
const (
	DefaultHealthAddr      = ":8081"
	DefaultSyncTimeout     = 2 * time.Minute
	DefaultShutdownTimeout = 20 * time.Second
)

// ErrShutdownTimeout is returned by Run when the shutdown did not finish
// within ShutdownTimeout.
var ErrShutdownTimeout = errors.New("app: shutdown did not finish in time")

// The resources most programs watch.
var (
	ConfigMaps = httpwatch.Resource{Version: "v1", Resource: "configmaps"}
	Secrets    = httpwatch.Resource{Version: "v1", Resource: "secrets"}
	Pods       = httpwatch.Resource{Version: "v1", Resource: "pods"}
)

var leases = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}

// App is a listwatch program's composition root. Make one with New, set
// its fields (or let the command line set them), then call Main or Run
// with the function that wires the program.
type App struct {
	// Name names the program: the field manager of its writes, the
	// reportingController of its Events, its Lease, its log lines.
	Name string
	// Flags is the command line Run parses: the program may add flags of
	// its own to it before Run. Run adds kubeconfig.Flags and a flag for
	// each field below that has one, its value the default.
	Flags *flag.FlagSet

	// HealthAddr is where /healthz, /livez, /readyz and /metrics are
	// served (--health-addr); "" serves nothing.
	HealthAddr string
	// LeaderElection makes every runner reconcile only while this replica
	// holds the Lease named Name in LeaseNamespace (--leader-elect).
	LeaderElection bool
	// Shards shares each runner's keys among the replicas running with
	// it (--shards): each caches and reconciles only its own, by
	// membership Leases in LeaseNamespace (package shard). It excludes
	// LeaderElection.
	Shards bool
	// LeaseNamespace holds the Leases (--lease-namespace); "" means the
	// pod's namespace in a cluster, else "default".
	LeaseNamespace string
	// Identity names this replica in the Lease and its Events
	// (--identity); "" means $POD_NAME, else host name and process id.
	Identity string
	// SnapshotDir, if set, keeps a snapshot of every cache there and
	// starts from it: a warm start (--snapshot-dir, decision 32).
	SnapshotDir string
	// Workers is how many keys each runner reconciles at once.
	Workers int

	// SyncTimeout bounds the wait for the caches' first sync, and for a
	// first lease record with LeaderElection; Run then ends with why.
	SyncTimeout time.Duration
	// ShutdownTimeout bounds the shutdown, from the end of Run's context
	// to Run's return.
	ShutdownTimeout time.Duration

	// Config, if set, is the server to talk to, and the connection flags
	// are not registered: for a program that finds its server itself.
	Config *kubeconfig.Config
	// Demo, if set, starts a server to run against when nothing names one
	// (no connection flag, $KUBECONFIG unset, not in a pod): examples use
	// it to run anywhere. It returns the server's URL and how to stop it.
	Demo func(ctx context.Context) (url string, stop func(), err error)
	// Metrics, if set, is called once setup has wired the program, and
	// what it returns is served at /metrics on HealthAddr. The prommetrics
	// module's Handler is one: a.Metrics = prommetrics.Handler.
	Metrics func(*App) (http.Handler, error)

	// Logger is every part's logger; nil means slog.Default().
	Logger *slog.Logger
	// Clock drives the app's own waits (SyncTimeout, ShutdownTimeout);
	// nil means the real clock.
	Clock clock.Clock

	mu        sync.Mutex
	running   bool
	client    *httpwatch.Client
	factory   *listwatch.Factory
	recorder  *events.Recorder
	caches    []*Cache // Watch's, shared
	sharded   []*Cache // the runners' own, with Shards
	runners   []*reconcile.Runner
	gos       []func(context.Context) error
	errs      []error       // of the wiring, returned by Run
	leased    chan struct{} // closed once a lease record was read or taken
	leaseOnce sync.Once
	leaseErr  error
	stopping  atomic.Bool // the shutdown has begun: not ready
}

// New returns an App named name with the defaults filled in: health on
// :8081, a 2 minute sync timeout, a 20 s shutdown timeout, one worker
// per runner.
func New(name string) *App {
	return &App{
		Name:            name,
		Flags:           flag.NewFlagSet(name, flag.ContinueOnError),
		HealthAddr:      DefaultHealthAddr,
		Workers:         reconcile.DefaultWorkers,
		SyncTimeout:     DefaultSyncTimeout,
		ShutdownTimeout: DefaultShutdownTimeout,
		Logger:          slog.Default(),
		Clock:           clock.Real,
	}
}

// Client is the app's client, nil before Run has connected.
func (a *App) Client() *httpwatch.Client { return a.client }

// Factory holds the app's informers, nil before Run has connected.
func (a *App) Factory() *listwatch.Factory { return a.factory }

// Runners are the runners Reconcile made, for metrics.
func (a *App) Runners() []*reconcile.Runner {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*reconcile.Runner(nil), a.runners...)
}

// Recorder is the app's Event recorder, nil before Run has connected.
func (a *App) Recorder() *events.Recorder { return a.recorder }

// Eventf records a Normal Event about regarding, its action the reason.
// It never blocks (decision 31).
func (a *App) Eventf(regarding *listwatch.Object, reason, format string, args ...any) {
	a.recorder.Eventf(regarding, events.Normal, reason, reason, format, args...)
}

// Warningf records a Warning Event about regarding.
func (a *App) Warningf(regarding *listwatch.Object, reason, format string, args ...any) {
	a.recorder.Eventf(regarding, events.Warning, reason, reason, format, args...)
}

// Go runs fn once every cache has synced, until the shutdown ends its
// context; an error it returns ends the program. It is for work other
// than reconciling: a report, a server.
func (a *App) Go(fn func(ctx context.Context) error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gos = append(a.gos, fn)
}

// allCaches are the shared caches and the runners' own.
func (a *App) allCaches() []*Cache {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append(append([]*Cache(nil), a.caches...), a.sharded...)
}

// fail records a wiring error for Run to return.
func (a *App) fail(err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.errs = append(a.errs, err)
}

// register adds a's flags to a.Flags, each defaulting to its field.
func (a *App) register(kf *kubeconfig.Flags) {
	if a.Config == nil {
		kf.Register(a.Flags)
	}
	a.Flags.StringVar(&a.HealthAddr, "health-addr", a.HealthAddr, "serve /healthz, /readyz and /metrics on this address (\"\": none)")
	a.Flags.BoolVar(&a.LeaderElection, "leader-elect", a.LeaderElection, "reconcile only while this replica holds the Lease")
	a.Flags.BoolVar(&a.Shards, "shards", a.Shards, "share the keys among the replicas by membership Leases")
	a.Flags.StringVar(&a.LeaseNamespace, "lease-namespace", a.LeaseNamespace, "namespace of the Lease (default: the pod's, else default)")
	a.Flags.StringVar(&a.Identity, "identity", a.Identity, "this replica's name in the Lease and Events (default: $POD_NAME, else host and pid)")
	a.Flags.StringVar(&a.SnapshotDir, "snapshot-dir", a.SnapshotDir, "keep a snapshot of each cache in this directory and start from it")
}

// parse parses args: flags only.
func (a *App) parse(args []string) error {
	if err := a.Flags.Parse(args); err != nil {
		return err
	}
	if a.Flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags only; see -h)", a.Flags.Arg(0))
	}
	if a.Shards && a.LeaderElection {
		return errors.New("--shards and --leader-elect exclude each other")
	}
	return nil
}

// defaults fills what the fields leave to Run.
func (a *App) defaults() {
	if a.Logger == nil {
		a.Logger = slog.Default()
	}
	if a.Clock == nil {
		a.Clock = clock.Real
	}
	if a.SyncTimeout <= 0 {
		a.SyncTimeout = DefaultSyncTimeout
	}
	if a.ShutdownTimeout <= 0 {
		a.ShutdownTimeout = DefaultShutdownTimeout
	}
	a.Workers = max(a.Workers, 1)
	if a.Identity == "" {
		a.Identity = os.Getenv("POD_NAME")
	}
	if a.Identity == "" {
		host, _ := os.Hostname()
		a.Identity = fmt.Sprintf("%s-%d", strings.ToLower(host), os.Getpid())
	}
	if a.LeaseNamespace == "" {
		a.LeaseNamespace = podNamespace(serviceAccountNamespace)
	}
}

// serviceAccountNamespace is where a pod's service account says the pod's
// namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// podNamespace is the namespace of the pod this process runs in, as its
// service account's file says, else "default".
func podNamespace(file string) string {
	b, err := os.ReadFile(file)
	if ns := strings.TrimSpace(string(b)); err == nil && ns != "" {
		return ns
	}
	return "default"
}
