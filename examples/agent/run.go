package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/processor"
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := cli.WithDuration(ctx, o.duration)
	defer cancel()

	world := &demo.OnDemand{Pods: demoPods()}
	cfg, where, closeDemo, err := cli.Connect(ctx, &o.kube, world.Start)
	if err != nil {
		return err
	}
	defer closeDemo()
	if world.Server != nil && o.node == "" {
		o.node = demoNode
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
	rc.MetadataOnly = o.metadataOnly
	inf := listwatch.NewInformer(rc, 0)
	inf.Reflector.Name = "pods on " + o.node
	inf.Reflector.FieldSelector = "spec.nodeName=" + o.node

	firstSync := cli.FailFast(inf)
	summary := newNodeSummary(o.node, o.metadataOnly)
	reg, err := inf.AddEventHandler(summary)
	if err != nil {
		return err
	}

	var bg sync.WaitGroup
	bg.Go(func() { inf.Run(ctx) })
	defer func() { cancel(); bg.Wait() }()

	fmt.Fprintf(stderr, "agent for node %s on %s\n", o.node, where)
	if err := waitSynced(ctx, firstSync, reg); err != nil {
		return cli.Explain(err, cfg.Host)
	}
	fmt.Fprintln(stdout, "synced ", summary)
	if world.Server != nil {
		churn(ctx, world.Server)
	}

	cli.Every(ctx, o.every, func() { fmt.Fprintln(stdout, "report ", summary) })
	// The informer's handler goroutine is gone once Run returns, so the
	// summary printed last is the final one.
	cancel()
	bg.Wait()
	fmt.Fprintln(stdout, "exit   ", summary)
	return nil
}

// waitSynced waits until the informer's first list has reached the
// summary's handler, or for the first error.
func waitSynced(ctx context.Context, firstSync *cli.FirstSync, reg *processor.Registration) error {
	if err := firstSync.Wait(ctx, nil); err != nil {
		return err
	}
	// The cache is synced; the handler may still be in its initial adds.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !reg.HasSynced() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
