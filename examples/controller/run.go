package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/ratelimit"
)

var podsResource = httpwatch.Resource{Version: "v1", Resource: "pods"}

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
	}
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	factory := listwatch.NewFactory(client)
	factory.Namespace = o.namespace
	factory.LabelSelector = o.labels
	pods := factory.ForResource(podsResource)

	// Until the first sync any error is fatal: a wrong URL or token will not
	// fix itself. Afterwards the informer retries, and we only report.
	fatal := make(chan error, 1)
	_ = pods.SetWatchErrorHandler(func(err error) {
		if !pods.HasSynced() {
			select {
			case fatal <- err:
			default:
			}
			return
		}
		fmt.Fprintln(stderr, "warning:", err)
	})

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

	var churning sync.WaitGroup
	factory.Start(ctx)
	defer func() { cancel(); factory.Shutdown(); churning.Wait() }()

	fmt.Fprintf(stderr, "controller for pods on %s\n", where)
	if err := waitSynced(ctx, pods, fatal); err != nil {
		return explain(err, cfg.Host)
	}
	fmt.Fprintf(stderr, "synced %d pods; starting %d workers\n", len(pods.Indexer().ListKeys()), o.workers)
	if demo != nil {
		churning.Go(func() { churn(ctx, demo) })
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

// waitSynced waits for the informer's first sync, or for the first error.
func waitSynced(ctx context.Context, inf *listwatch.Informer, fatal <-chan error) error {
	select {
	case <-inf.Synced():
		return nil
	case err := <-fatal:
		return err
	case <-ctx.Done():
		return fmt.Errorf("interrupted before the first sync: %w", ctx.Err())
	}
}

// explain turns the first error into one line a person can act on.
func explain(err error, host string) error {
	switch {
	case httpwatch.IsUnauthorized(err):
		return fmt.Errorf("the server at %s did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user", host)
	case httpwatch.IsForbidden(err):
		return fmt.Errorf("not allowed to list and watch pods (403 Forbidden): %w", err)
	case httpwatch.IsConnectionRefused(err) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the server at %s: %w", host, err)
	}
	return err
}
