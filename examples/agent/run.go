package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/processor"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if o.duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}

	cfg, where, demo, err := connect(o)
	if err != nil {
		return err
	}
	if demo != nil {
		defer demo.Close()
		if o.node == "" {
			o.node = demoNode
		}
	}
	if o.node == "" {
		return errors.New("no node to watch: set --node or NODE_NAME (from the downward API's spec.nodeName)")
	}
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	rc := client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	rc.DropManagedFields = true
	rc.MetadataOnly = o.metadataOnly
	inf := listwatch.NewInformer(rc, 0)
	_ = inf.SetTransform(nil) // the client already dropped managedFields while reading
	inf.Reflector.Name = "pods on " + o.node
	inf.Reflector.FieldSelector = "spec.nodeName=" + o.node

	// Until the first sync any error is fatal: a wrong URL or token will not
	// fix itself. Afterwards the informer retries, and we only report.
	fatal := make(chan error, 1)
	_ = inf.SetWatchErrorHandler(func(err error) {
		if !inf.HasSynced() {
			select {
			case fatal <- err:
			default:
			}
			return
		}
		fmt.Fprintln(stderr, "warning:", err)
	})
	summary := newNodeSummary(o.node, o.metadataOnly)
	reg, err := inf.AddEventHandler(summary)
	if err != nil {
		return err
	}

	var bg sync.WaitGroup
	bg.Go(func() { inf.Run(ctx) })
	defer func() { cancel(); bg.Wait() }()

	fmt.Fprintf(stderr, "agent for node %s on %s\n", o.node, where)
	if err := waitSynced(ctx, inf, reg, fatal); err != nil {
		return explain(err, cfg.Host)
	}
	fmt.Fprintln(stdout, "synced ", summary)
	if demo != nil {
		bg.Go(func() { churn(ctx, demo) })
	}

	report(ctx, stdout, summary, o.every)
	// The informer's handler goroutine is gone once Run returns, so the
	// summary printed last is the final one.
	cancel()
	bg.Wait()
	fmt.Fprintln(stdout, "exit   ", summary)
	return nil
}

// report prints the summary every period until ctx is done.
func report(ctx context.Context, w io.Writer, s *nodeSummary, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			fmt.Fprintln(w, "report ", s)
		}
	}
}

// waitSynced waits until the informer's first list has reached the
// summary's handler, or for the first error.
func waitSynced(ctx context.Context, inf *listwatch.Informer, reg *processor.Registration, fatal <-chan error) error {
	select {
	case <-inf.Synced():
	case err := <-fatal:
		return err
	case <-ctx.Done():
		return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
	}
	if !listwatch.WaitForCacheSync(ctx, reg.HasSynced) {
		return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
	}
	return nil
}
