// Command controller is a small Kubernetes controller built on listwatch: a
// shared informer of pods feeds their keys into a rate-limited work queue,
// and a few workers reconcile each key against the informer's cache.
//
// Its reconciler keeps a tally of pods per namespace and phase. A pod
// labelled fail=true makes it fail on purpose, to show retries backing off
// (AddRateLimited, NumRequeues) until the key is dropped after --retries
// retries (Forget, which also resets the key's backoff). On SIGINT or
// SIGTERM the queue is shut down with drain: the workers finish what they
// hold and what is queued, then it exits with a summary.
//
// With no server given it runs against an embedded fake API server holding
// demo pods that keep changing, some of them labelled fail=true:
//
//	go run ./examples/controller
//	go run ./examples/controller --workers 4 --duration 10s
//
// Point it at a real cluster with a kubeconfig, a server URL, or from inside
// a pod; flags come first, then in-cluster config when
// KUBERNETES_SERVICE_HOST is set, then the demo server:
//
//	go run ./examples/controller --kubeconfig ~/.kube/config -n default
//	go run ./examples/controller --server https://127.0.0.1:6443 --token-file token --ca ca.crt
package main

import (
	"fmt"
	"io"
	"time"

	"github.com/listwatch/listwatch/examples/internal/cli"
)

const about = `controller is a small controller built on listwatch: an informer of pods feeds
their keys into a rate-limited work queue, and workers reconcile each key
against the cache, tallying pods per namespace and phase. Pods labelled
fail=true fail on purpose, to show retries backing off. With no server given
it runs against an embedded fake API server.`

func main() { cli.Main("controller", run) }

// options are the command line.
type options struct {
	conn              cli.Connection
	namespace, labels string
	workers, retries  int
	duration          time.Duration
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlagSet("controller", about, stderr)
	o.conn.RegisterFlags(fs)
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all)")
	fs.StringVar(&o.namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&o.labels, "selector", "", "label selector, e.g. app=web")
	fs.StringVar(&o.labels, "l", "", "shorthand for --selector")
	fs.IntVar(&o.workers, "workers", 2, "number of workers reconciling keys in parallel")
	fs.IntVar(&o.retries, "retries", 5, "retries of a failing key before it is dropped")
	fs.DurationVar(&o.duration, "duration", 0, "exit after this long (0: run until interrupted)")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if o.workers < 1 {
		return o, fmt.Errorf("--workers must be at least 1, not %d", o.workers)
	}
	if o.retries < 0 {
		return o, fmt.Errorf("--retries must not be negative, not %d", o.retries)
	}
	return o, nil
}
