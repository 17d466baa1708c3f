// Command controller is a Kubernetes controller built on listwatch's
// reconcile runner: it labels every configmap checked=true (a merge patch
// at the resourceVersion it checked) and keeps beside each one a report
// configmap it owns (server-side apply, ownerReferences with
// controller=true), recording an Event for each change it makes. A report
// changed or deleted by someone else brings its owner back to the
// controller, which applies it again.
//
// With no server given it runs against an embedded fake API server whose
// configmaps keep changing:
//
//	go run ./examples/controller
//	go run ./examples/controller --kubeconfig ~/.kube/config --namespace default
//
// Run several replicas, on Leases in --lease-namespace: with --leader-elect
// only the leader reconciles; with --shards N each replica caches and
// reconciles its share of the keys. --health-addr serves /readyz and /livez.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/store"
)

func main() { cli.Main("controller", run) }

const reportLabel = "listwatch.io/report-of"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var kf kubeconfig.Flags
	fs := cli.NewFlagSet("controller", "controller labels configmaps checked=true and keeps a report configmap for each.", stderr)
	kf.Register(fs)
	host, _ := os.Hostname()
	ns := fs.String("namespace", "", "namespace to watch (default: all)")
	workers := fs.Int("workers", 2, "keys reconciled in parallel")
	health := fs.String("health-addr", "", "serve /readyz and /livez on this address")
	leaderElect := fs.Bool("leader-elect", false, "reconcile only while this replica leads")
	shards := fs.Int("shards", 0, "share the keys among replicas by membership Leases")
	identity := fs.String("identity", fmt.Sprintf("%s-%d", host, os.Getpid()), "this replica's identity")
	leaseNS := fs.String("lease-namespace", "default", "namespace of the Leases")
	lease := fs.Duration("lease-duration", 15*time.Second, "how long a silent replica keeps its lease (renewed every 2/15 of it, given up at 2/3)")
	if err := cli.Parse(fs, args); err != nil {
		return err
	} else if *workers < 1 || *shards < 0 || *leaderElect && *shards > 0 {
		return errors.New("--workers must be at least 1, --shards not negative, and --leader-elect and --shards exclude each other")
	}
	cfg, where, closeDemo, err := cli.Connect(ctx, &kf, (&demo.OnDemand{Setup: demo.ConfigMapWorld(ctx, 12, 300*time.Millisecond)}).Start)
	if err != nil {
		return err
	}
	defer closeDemo()
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: *ns})
	leases := client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: *leaseNS})
	timing := leader.Config{Leases: leases, Name: "listwatch-controller", Identity: *identity, ReleaseOnCancel: true,
		LeaseDuration: *lease, RenewDeadline: *lease * 2 / 3, RetryPeriod: *lease * 2 / 15}
	var owners *listwatch.Informer
	var source httpwatch.ListerWatcher = cms
	var member *shard.Member
	if *shards > 0 {
		if member, err = shard.New(shard.Config{Leases: leases, Group: timing.Name, Identity: timing.Identity,
			LeaseDuration: timing.LeaseDuration, RenewDeadline: timing.RenewDeadline, RetryPeriod: timing.RetryPeriod,
			OnChange: func(m []string) { fmt.Fprintf(stderr, "members: %v\n", m); owners.Relist() }}); err != nil {
			return err
		}
		source = member.Source(cms)
	}
	owners, reports := listwatch.NewInformer(source, 0), listwatch.NewInformer(cms, 0)
	owners.Reflector.LabelSelector, reports.Reflector.LabelSelector = "!"+reportLabel, reportLabel
	l := &labeller{cms: cms, owners: owners.Lister(), reports: reports.Lister(), out: stdout,
		events: events.New(client.Resource(events.Resource), "listwatch.io/labeller", *identity)}
	r := reconcile.New(owners, l.reconcile)
	r.Workers, r.Member = *workers, member
	r.Watches = []reconcile.Watch{{Informer: reports, Keys: reconcile.ControllerOf("", "ConfigMap")}}
	if *leaderElect {
		timing.OnNewLeader = func(id string) { fmt.Fprintf(stderr, "leader: %s\n", id) }
		r.Election = &timing
	}
	if *health != "" {
		go http.ListenAndServe(*health, r.Health())
	}
	go l.events.Run(ctx)
	fmt.Fprintf(stderr, "controller of configmaps on %s\n", where)
	return cli.Explain(r.Run(ctx), cfg.Host)
}

// labeller reconciles one configmap: its label, then its report.
type labeller struct {
	cms             *httpwatch.ResourceClient
	owners, reports *listwatch.Lister
	events          *events.Recorder
	out             io.Writer
}

func (l *labeller) reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	ns, name, _ := store.SplitKey(key)
	cm, err := l.owners.Get(ns, name)
	if err != nil { // not found: gone, and its report with it, by its ownerReference
		return reconcile.Result{}, nil
	}
	if v, _ := cm.Label("checked"); v != "true" {
		body, _ := patch.Merge(cm, patch.ResourceVersion).Set("metadata.labels.checked", "true").Bytes()
		if _, err := l.cms.Namespace(ns).Patch(ctx, name, httpwatch.MergePatch, body, httpwatch.WriteOptions{FieldManager: "labeller"}); err != nil {
			return reconcile.Result{}, err // a 409 is retried at the version the cache will hold
		}
		l.events.Event(cm, events.Normal, "Labelled", "Label", "set checked=true")
		fmt.Fprintln(l.out, "labelled", key)
		return reconcile.Result{}, nil // the patch's watch event brings the key back, its report then
	}
	keys := strconv.Itoa(len(cm.Get("data").Map()))
	if old, err := l.reports.Get(ns, name+"-report"); err == nil && old.Get("data.keys").String() == keys {
		return reconcile.Result{}, nil
	}
	body, err := patch.Object("v1", "ConfigMap", ns, name+"-report").ControlledBy(cm).
		Set(patch.Path("metadata", "labels", reportLabel), name).Set("data.keys", keys).Bytes()
	if err != nil {
		return reconcile.Result{}, err
	}
	if _, err := l.cms.Namespace(ns).Apply(ctx, body, httpwatch.ApplyOptions{FieldManager: "labeller", Force: true}); err != nil {
		return reconcile.Result{}, err
	}
	l.events.Event(cm, events.Normal, "Reported", "Report", keys+" keys")
	fmt.Fprintf(l.out, "reported %s: %s keys\n", key, keys)
	return reconcile.Result{}, nil
}
