package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	res, err := parseResource(o.resource)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}

	cfg, where, closeDemo, err := connect(ctx, o)
	if err != nil {
		return err
	}
	if closeDemo != nil {
		defer closeDemo()
		defer cancel() // stop the churn before waiting for it
	}
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	res.Namespace = o.namespace
	rc := client.Resource(res)
	rc.DropManagedFields = true
	inf := listwatch.NewInformer(rc, 0)
	_ = inf.SetTransform(nil) // the client already dropped managedFields while reading
	inf.Reflector.Name = o.resource
	inf.Reflector.LabelSelector = o.labels
	inf.Reflector.FieldSelector = o.fields
	inf.Reflector.WatchList = o.watchList

	// Until the first sync, any error is fatal: a wrong URL, token or
	// resource name will not fix itself. Afterwards errors are retried and
	// only reported.
	fatal := make(chan error, 1)
	var lastErr atomic.Value
	_ = inf.SetWatchErrorHandler(func(err error) {
		lastErr.Store(err)
		if !inf.HasSynced() {
			select {
			case fatal <- err:
			default:
			}
			return
		}
		fmt.Fprintln(stderr, "warning:", err)
	})

	p := &printer{out: stdout, json: o.output == "json", max: o.events, done: cancel}
	if _, err := inf.AddEventHandler(p); err != nil {
		return err
	}
	runDone := make(chan struct{})
	go func() { inf.Run(ctx); close(runDone) }()
	defer func() { cancel(); <-runDone }()

	fmt.Fprintf(stderr, "watching %s on %s\n", describe(res), where)
	start := time.Now()
	if err := waitSynced(ctx, inf, fatal, start, stderr); err != nil {
		return explain(err, cfg.Host)
	}
	st := inf.Reflector.Stats()
	fmt.Fprintf(stderr, "synced %d objects (%d pages) in %s; watching from resourceVersion %s\n",
		len(inf.Indexer().ListKeys()), st.ListPages, time.Since(start).Round(time.Millisecond), inf.LastSyncResourceVersion())

	<-ctx.Done()
	cancel()
	<-runDone
	st = inf.Reflector.Stats()
	fmt.Fprintf(stderr, "summary: %d objects cached, %d events, %d reconnects, %d relists, %d errors\n",
		len(inf.Indexer().ListKeys()), p.count.Load(), max(st.Watches-1, 0), max(st.Lists-1, 0), st.Errors)
	return nil
}

// waitSynced waits for the first sync, showing progress on a terminal.
func waitSynced(ctx context.Context, inf *listwatch.Informer, fatal <-chan error, start time.Time, stderr io.Writer) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	tty := isTerminal(stderr)
	for {
		select {
		case <-inf.Synced():
			if tty {
				fmt.Fprint(stderr, "\r\033[K")
			}
			return nil
		case err := <-fatal:
			if tty {
				fmt.Fprint(stderr, "\r\033[K")
			}
			return err
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
		case <-tick.C:
			if tty {
				st := inf.Reflector.Stats()
				fmt.Fprintf(stderr, "\rsyncing: %d pages, %d objects, %s", st.ListPages, st.ListedItems+st.Events,
					time.Since(start).Round(100*time.Millisecond))
			}
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// explain turns the first error into one line a person can act on.
func explain(err error, host string) error {
	switch {
	case httpwatch.IsUnauthorized(err):
		return fmt.Errorf("the server at %s did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user", host)
	case httpwatch.IsForbidden(err):
		return fmt.Errorf("not allowed (403 Forbidden): %w", err)
	case httpwatch.IsNotFound(err):
		return fmt.Errorf("the server has no such resource (404 NotFound); check --resource (plural[.version[.group]]): %w", err)
	case httpwatch.IsConnectionRefused(err) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the server at %s: %w", host, err)
	}
	return err
}

func describe(r httpwatch.Resource) string {
	gv := r.Version
	if r.Group != "" {
		gv = r.Group + "/" + r.Version
	}
	ns := "all namespaces"
	if r.Namespace != "" {
		ns = "namespace " + r.Namespace
	}
	return fmt.Sprintf("%s (%s) in %s", r.Resource, gv, ns)
}

// connect chooses the server: --server, a kubeconfig, in-cluster, or else
// the embedded demo server.
func connect(ctx context.Context, o options) (cfg *httpwatch.Config, where string, closeDemo func(), err error) {
	switch {
	case o.server != "":
		cfg = &httpwatch.Config{Host: o.server, BearerToken: o.token, BearerTokenFile: o.tokenFn, CAFile: o.ca, Insecure: o.insecure}
		return cfg, o.server, nil, nil
	case o.kubeconfig != "":
		cfg, err = httpwatch.LoadKubeconfig(o.kubeconfig, o.context)
	case o.context != "" || os.Getenv("KUBERNETES_SERVICE_HOST") != "":
		cfg, err = httpwatch.FromEnvironment(o.context)
	default:
		s, closeDemo, err := startDemo(ctx)
		if err != nil {
			return nil, "", nil, err
		}
		return &httpwatch.Config{Host: s.URL}, s.URL + " (embedded demo server; --server or --kubeconfig for a real one)", closeDemo, nil
	}
	if err != nil {
		return nil, "", nil, err
	}
	return cfg, cfg.Host, nil, nil
}

// printer prints one line per change after the initial list.
type printer struct {
	out   io.Writer
	json  bool
	max   int
	done  func()
	count atomic.Int64
	mu    sync.Mutex
}

func (p *printer) OnAdd(o *listwatch.Object, initial bool) {
	if !initial {
		p.print("ADDED", o)
	}
}

func (p *printer) OnUpdate(_, o *listwatch.Object) { p.print("MODIFIED", o) }

func (p *printer) OnDelete(o *listwatch.Object, unknown bool) {
	if unknown {
		p.print("DELETED(missed)", o)
		return
	}
	p.print("DELETED", o)
}

func (p *printer) print(kind string, o *listwatch.Object) {
	n := p.count.Add(1)
	if p.max > 0 && n > int64(p.max) {
		return
	}
	p.mu.Lock()
	if p.json {
		line, _ := json.Marshal(struct {
			Type            string          `json:"type"`
			Key             string          `json:"key"`
			ResourceVersion string          `json:"resourceVersion"`
			Object          json.RawMessage `json:"object"`
		}{kind, listwatch.Key(o), o.ResourceVersion(), o.Raw()})
		fmt.Fprintf(p.out, "%s\n", line)
	} else {
		fmt.Fprintf(p.out, "%-9s %-40s rv=%s\n", kind, listwatch.Key(o), o.ResourceVersion())
	}
	p.mu.Unlock()
	if p.max > 0 && n == int64(p.max) {
		p.done()
	}
}
