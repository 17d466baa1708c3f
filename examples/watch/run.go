package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/examples/internal/cli"
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
	ctx, cancel := cli.WithDuration(ctx, o.duration)
	defer cancel()

	cfg, where, closeDemo, err := cli.Connect(ctx, &o.kube, startDemo)
	if err != nil {
		return err
	}
	defer closeDemo()
	defer cancel() // stop the demo's churn before waiting for it
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	res.Namespace = o.namespace
	rc := client.Resource(res)
	inf := listwatch.NewInformer(rc, 0)
	inf.Reflector.Name = o.resource
	inf.Reflector.LabelSelector = o.labels
	inf.Reflector.FieldSelector = o.fields
	inf.Reflector.PagedList = !o.watchList

	firstSync := cli.FailFast(inf)

	p := &printer{out: stdout, json: o.output == "json", initial: o.initial, max: o.events, done: cancel}
	if _, err := inf.AddEventHandler(p); err != nil {
		return err
	}
	runDone := make(chan struct{})
	go func() { inf.Run(ctx); close(runDone) }()
	defer func() { cancel(); <-runDone }()

	fmt.Fprintf(stderr, "watching %s on %s\n", describe(res), where)
	start := time.Now()
	if err := firstSync.Wait(ctx, stderr); err != nil {
		return cli.Explain(err, cfg.Host)
	}
	st := inf.Stats()
	fmt.Fprintf(stderr, "synced %d objects (%d pages) in %s; watching from resourceVersion %s\n",
		st.Objects, st.ListPages, time.Since(start).Round(time.Millisecond), inf.LastSyncResourceVersion())

	<-ctx.Done()
	cancel()
	<-runDone
	st = inf.Stats()
	fmt.Fprintf(stderr, "summary: %d objects cached, %d events, %d reconnects, %d relists, %d errors\n",
		st.Objects, p.count.Load(), max(st.Watches-1, 0), max(st.Lists-1, 0), st.Errors)
	return nil
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

// printer prints one line per object of the initial list (unless told
// not to) and one per change; max counts changes only.
type printer struct {
	out     io.Writer
	json    bool
	initial bool
	max     int
	done    func()
	count   atomic.Int64
	mu      sync.Mutex
}

func (p *printer) OnAdd(o *listwatch.Object, initial bool) {
	switch {
	case initial && p.initial:
		p.write("ADDED", o, true)
	case !initial:
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
	p.write(kind, o, false)
	if p.max > 0 && n == int64(p.max) {
		p.done()
	}
}

func (p *printer) write(kind string, o *listwatch.Object, initial bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.json {
		line, _ := json.Marshal(struct {
			Type            string          `json:"type"`
			Initial         bool            `json:"initial,omitempty"`
			Key             string          `json:"key"`
			ResourceVersion string          `json:"resourceVersion"`
			Object          json.RawMessage `json:"object"`
		}{kind, initial, listwatch.Key(o), o.ResourceVersion(), o.Raw()})
		fmt.Fprintf(p.out, "%s\n", line)
		return
	}
	fmt.Fprintf(p.out, "%-9s %-40s rv=%s\n", kind, listwatch.Key(o), o.ResourceVersion())
}
