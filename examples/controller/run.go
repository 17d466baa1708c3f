package main

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/ratelimit"
)

var podsResource = httpwatch.Resource{Version: "v1", Resource: "pods"}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := cli.WithDuration(ctx, o.duration)
	defer cancel()

	world := &demo.OnDemand{Pods: demoPods()}
	cfg, where, closeDemo, err := o.conn.Config(ctx, world.Start)
	if err != nil {
		return err
	}
	defer closeDemo()
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	factory := listwatch.NewFactory(client)
	factory.Namespace = o.namespace
	factory.LabelSelector = o.labels
	pods := factory.ForResource(podsResource)

	firstSync := cli.FailFast(pods, stderr)

	c := &controller{
		queue:   ratelimit.NewQueue(ratelimit.Config[string]{Name: "pods"}),
		rec:     newTally(pods.Lister()),
		retries: o.retries,
		out:     stdout,
	}
	defer c.queue.ShutDown()
	if _, err := pods.AddEventHandler(c.handler()); err != nil {
		return err
	}

	factory.Start(ctx)
	defer func() { cancel(); factory.Shutdown() }()

	fmt.Fprintf(stderr, "controller for pods on %s\n", where)
	if err := firstSync.Wait(ctx, nil); err != nil {
		return cli.Explain(err, cfg.Host)
	}
	fmt.Fprintf(stderr, "synced %d pods; starting %d workers\n", pods.Indexer().Len(), o.workers)
	if world.Server != nil {
		churn(ctx, world.Server)
	}
	var workers sync.WaitGroup
	for range o.workers {
		workers.Go(c.runWorker)
	}

	<-ctx.Done()
	fmt.Fprintln(stderr, "shutting down: workers finish the queued keys")
	c.queue.ShutDownWithDrain()
	workers.Wait()

	fmt.Fprintf(stderr, "summary: %d reconciled, %d retried, %d dropped\n",
		c.reconciled.Load(), c.retried.Load(), c.dropped.Load())
	for _, line := range c.rec.summary() {
		fmt.Fprintln(stderr, "  "+line)
	}
	return nil
}
