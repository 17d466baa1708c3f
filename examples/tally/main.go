// Command tally is a small Kubernetes controller assembled by hand from
// listwatch's parts: a shared informer of pods feeds their keys into a
// rate-limited work queue, and a few workers reconcile each key against
// the informer's cache. examples/controller shows a controller built on
// the reconcile runner instead; tally stays as the worked example of the
// parts, and as the process the e2e scale suite kills and restarts.
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
//	go run ./examples/tally
//	go run ./examples/tally --workers 4 --duration 10s
//
// Point it at a real cluster with a kubeconfig, a server URL, or from inside
// a pod; flags come first, then in-cluster config when
// KUBERNETES_SERVICE_HOST is set, then the demo server:
//
//	go run ./examples/tally --kubeconfig ~/.kube/config -n default
//	go run ./examples/tally --server https://127.0.0.1:6443 --token-file token --ca ca.crt
//
// Run several replicas to scale out, on coordination.k8s.io Leases in
// --lease-namespace: with --leader-elect only the leader (package leader)
// runs the controller, and another replica takes over when it dies; with
// --shards N each replica holds a membership lease (package shard), caches
// and reconciles only the keys rendezvous hashing gives it, and hands keys
// over safely when replicas join, leave or die:
//
//	go run ./examples/tally --kubeconfig ~/.kube/config --resource configmaps --shards 3
//
// --spans prints one line per reconcile, "span <identity> <key>
// <resourceVersion> <start> <end> <ok|error>" (times in Unix microseconds),
// for checking who reconciled what, and when.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

const about = `tally is a small controller built on listwatch: an informer of pods feeds
their keys into a rate-limited work queue, and workers reconcile each key
against the cache, tallying pods per namespace and phase. Pods labelled
fail=true fail on purpose, to show retries backing off. With no server given
it runs against an embedded fake API server.`

func main() { cli.Main("tally", run) }

// options are the command line.
type options struct {
	kube              kubeconfig.Flags
	namespace, labels string
	resource          string
	workers, retries  int
	duration          time.Duration
	spans             bool
	scale             scaleOptions
}

// scaleOptions say how replicas share the work.
type scaleOptions struct {
	leaderElect                               bool
	shards                                    int
	identity                                  string
	leaseNamespace, leaseName                 string
	leaseDuration, renewDeadline, retryPeriod time.Duration
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlagSet("tally", about, stderr)
	o.kube.Register(fs)
	fs.StringVar(&o.namespace, "namespace", "", "namespace to watch (default: all)")
	fs.StringVar(&o.namespace, "n", "", "shorthand for --namespace")
	fs.StringVar(&o.labels, "selector", "", "label selector, e.g. app=web")
	fs.StringVar(&o.labels, "l", "", "shorthand for --selector")
	fs.IntVar(&o.workers, "workers", 2, "number of workers reconciling keys in parallel")
	fs.IntVar(&o.retries, "retries", 5, "retries of a failing key before it is dropped")
	fs.DurationVar(&o.duration, "duration", 0, "exit after this long (0: run until interrupted)")
	fs.StringVar(&o.resource, "resource", "pods", "core v1 resource to reconcile: pods or configmaps (the demo server has pods only)")
	fs.BoolVar(&o.spans, "spans", false, "print a span line per reconcile: identity, key, resourceVersion, start and end (Unix µs), result")
	sc := &o.scale
	fs.BoolVar(&sc.leaderElect, "leader-elect", false, "run the controller only while this replica leads (a Lease in --lease-namespace)")
	fs.IntVar(&sc.shards, "shards", 0, "share keys among replicas by membership Leases; start once this many replicas are live (or after --lease-duration)")
	fs.StringVar(&sc.identity, "identity", defaultIdentity(), "this replica's identity among the others")
	fs.StringVar(&sc.leaseNamespace, "lease-namespace", "", "namespace of the Leases (default: --namespace, else default)")
	fs.StringVar(&sc.leaseName, "lease-name", "listwatch-controller", "leader Lease name, or shard group name")
	fs.DurationVar(&sc.leaseDuration, "lease-duration", 15*time.Second, "how long others wait before they take a silent replica for dead")
	fs.DurationVar(&sc.renewDeadline, "renew-deadline", 10*time.Second, "how long a replica keeps trying to renew before it stops working")
	fs.DurationVar(&sc.retryPeriod, "retry-period", 2*time.Second, "wait between lease renewals and reads")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if o.resource != "pods" && o.resource != "configmaps" {
		return o, fmt.Errorf("--resource must be pods or configmaps, not %q", o.resource)
	}
	if sc.leaderElect && sc.shards > 0 {
		return o, fmt.Errorf("--leader-elect and --shards exclude each other")
	}
	if sc.shards < 0 {
		return o, fmt.Errorf("--shards must not be negative, not %d", sc.shards)
	}
	if sc.leaseNamespace == "" {
		sc.leaseNamespace = o.namespace
	}
	if sc.leaseNamespace == "" {
		sc.leaseNamespace = "default"
	}
	if o.workers < 1 {
		return o, fmt.Errorf("--workers must be at least 1, not %d", o.workers)
	}
	if o.retries < 0 {
		return o, fmt.Errorf("--retries must not be negative, not %d", o.retries)
	}
	return o, nil
}

// defaultIdentity is hostname-pid, lowercased, as a lease name wants it.
func defaultIdentity() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "controller"
	}
	return strings.ToLower(fmt.Sprintf("%s-%d", host, os.Getpid()))
}
