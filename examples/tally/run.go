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
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
)

// env is what every way of running the controller shares.
type env struct {
	o              options
	client         *httpwatch.Client
	host, where    string
	world          *demo.OnDemand
	stdout, stderr io.Writer
}

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
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()
	if world.Server != nil {
		world.Server.AddResource(watchtest.Leases, watchtest.Definition{})
	}
	e := &env{o: o, client: client, host: cfg.Host, where: where, world: world, stdout: stdout, stderr: stderr}
	switch {
	case o.scale.leaderElect:
		return e.lead(ctx)
	case o.scale.shards > 0:
		return e.shard(ctx)
	}
	return e.control(ctx, nil, nil)
}

// control runs the controller until ctx is done. With a member, the
// informer caches only the member's keys and workers reconcile a key only
// once the member hands it out; started, if set, sees the informer before
// it runs.
func (e *env) control(ctx context.Context, member *shard.Member, started func(*listwatch.Informer)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := httpwatch.Resource{Version: "v1", Resource: e.o.resource, Namespace: e.o.namespace}
	var source httpwatch.ListerWatcher = e.client.Resource(res)
	if member != nil {
		source = member.Source(source)
	}
	inf := listwatch.NewInformer(source, 0, listwatch.Selector{Label: e.o.labels})
	inf.Reflector.Name = e.o.resource
	firstSync := cli.FailFast(inf)

	c := &controller{
		queue:    ratelimit.NewQueue(ratelimit.Config[string]{Name: e.o.resource}),
		rec:      newTally(inf.Lister()),
		retries:  e.o.retries,
		member:   member,
		identity: e.o.scale.identity,
		spans:    e.o.spans,
		out:      e.stdout,
	}
	defer c.queue.ShutDown()
	if _, err := inf.AddEventHandler(c.handler()); err != nil {
		return err
	}
	if started != nil {
		started(inf)
	}
	var informer sync.WaitGroup
	informer.Go(func() { inf.Run(ctx) })
	defer func() { cancel(); informer.Wait() }()

	fmt.Fprintf(e.stderr, "controller for %s on %s\n", e.o.resource, e.where)
	if err := firstSync.Wait(ctx, nil); err != nil {
		return cli.Explain(err, e.host)
	}
	fmt.Fprintf(e.stderr, "synced %d %s; starting %d workers\n", inf.Indexer().Len(), e.o.resource, e.o.workers)
	if e.world.Server != nil {
		churn(ctx, e.world.Server)
	}
	var workers sync.WaitGroup
	for range e.o.workers {
		workers.Go(func() { c.runWorker(ctx) })
	}

	<-ctx.Done()
	if e.o.scale.leaderElect {
		// No longer the leader, or shutting down: stop at once, the next
		// leader reconciles what is left.
		fmt.Fprintln(e.stderr, "shutting down: workers finish the key they hold")
		c.queue.ShutDown()
	} else {
		fmt.Fprintln(e.stderr, "shutting down: workers finish the queued keys")
		c.queue.ShutDownWithDrain()
	}
	workers.Wait()

	fmt.Fprintf(e.stderr, "summary: %d reconciled, %d retried, %d dropped\n",
		c.reconciled.Load(), c.retried.Load(), c.dropped.Load())
	for _, line := range c.rec.summary() {
		fmt.Fprintln(e.stderr, "  "+line)
	}
	return nil
}
