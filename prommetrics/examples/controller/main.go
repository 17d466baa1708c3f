// Command controller is a controller built on listwatch's reconcile
// runner that serves Prometheus metrics: it labels every configmap
// checked=true, and /metrics on --metrics-addr carries the names
// controller-runtime's controllers export (workqueue_*, rest_client_*,
// controller_runtime_*, leader_election_master_status), so their
// dashboards read it unchanged, and listwatch_informer_* for its cache.
//
//	go run ./examples/controller                       # an embedded fake API server
//	go run ./examples/controller --kubeconfig ~/.kube/config --leader-elect
//	curl -s localhost:8080/metrics | grep -E '^(workqueue|controller_runtime)_'
//
// It lives in the prommetrics module, not beside the library's examples,
// so that the library module never depends on client_golang.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "controller:", err)
		os.Exit(1)
	}
}

// run is the program, saying what it does on out, until ctx ends.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	var kf kubeconfig.Flags
	kf.Register(fs)
	ns := fs.String("namespace", "", "namespace to watch (default: all)")
	addr := fs.String("metrics-addr", ":8080", "serve /metrics on this address")
	elect := fs.Bool("leader-elect", false, "reconcile only while this replica leads (Leases in --namespace, default \"default\")")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, closeDemo, err := connect(&kf)
	if err != nil {
		return err
	}
	defer closeDemo()
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	f := listwatch.NewFactory(client)
	f.Namespace = *ns
	cms := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "configmaps"})
	r := reconcile.New(cms, label(client, cms.Lister()))
	r.Factory, r.Name = f, "labeller"
	if *elect {
		host, _ := os.Hostname()
		leases := client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: cmp(*ns, "default")})
		r.Election = &leader.Config{Leases: leases, Name: "listwatch-labeller", Identity: fmt.Sprintf("%s-%d", host, os.Getpid()), ReleaseOnCancel: true}
	}
	// Before Run: the metrics wrap the runner's hooks.
	handler, err := metricsHandler(r)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()
	fmt.Fprintf(out, "labelling configmaps on %s; metrics on http://%s/metrics\n", cfg.Host, ln.Addr())
	return r.Run(ctx)
}

// label sets checked=true on each configmap that lacks it.
func label(client *httpwatch.Client, cms *listwatch.Lister) reconcile.Func {
	return func(ctx context.Context, key string) (reconcile.Result, error) {
		ns, name, _ := store.SplitKey(key)
		cm, err := cms.Get(ns, name)
		if err != nil {
			return reconcile.Result{}, nil // gone
		}
		if v, _ := cm.Label("checked"); v == "true" {
			return reconcile.Result{}, nil
		}
		rc := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
		_, err = rc.Patch(ctx, name, httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}}}`))
		return reconcile.Result{}, err
	}
}

func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
