// Command agent is a node agent built on listwatch, as a DaemonSet runs
// it, that serves Prometheus metrics: it caches the pods of its node,
// keeps a snapshot of them to restart warm (decision 32), and /metrics on
// --metrics-addr says what an operator needs of each cache: synced,
// objects restored at start, objects and bytes, the last sync, sync
// errors by kind, watch restarts by cause, and the snapshot's last save.
//
//	go run ./examples/agent                       # an embedded fake API server
//	NODE_NAME=worker-1 go run ./examples/agent --kubeconfig ~/.kube/config
//	curl -s localhost:8080/metrics | grep ^listwatch_
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
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/prommetrics"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/watchtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// run is the program, saying what it does on out, until ctx ends.
func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("agent", flag.ContinueOnError)
	var kf kubeconfig.Flags
	kf.Register(fs)
	node := fs.String("node", os.Getenv("NODE_NAME"), "the node whose pods to cache (default $NODE_NAME)")
	dir := fs.String("snapshot-dir", filepath.Join(os.TempDir(), "listwatch-agent"), "keep a snapshot of the cache here (\"\": none)")
	addr := fs.String("metrics-addr", ":8080", "serve /metrics on this address")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := kf.Load()
	if err != nil && kf.Server == "" && kf.Kubeconfig == "" && kf.Context == "" {
		s := demo()
		defer s.Close()
		cfg, err, *node = &kubeconfig.Config{Host: s.URL}, nil, "node-1"
	}
	if err != nil {
		return err
	}
	client, err := httpwatch.NewClient(cfg)
	if err != nil {
		return err
	}
	f := listwatch.NewFactory(client)
	f.Snapshot = snapshot.Options{Dir: *dir}
	var onNode listwatch.Selector
	if *node != "" {
		onNode.Field = "spec.nodeName=" + *node
	}
	pods := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"}, onNode)

	reg := prometheus.NewRegistry()
	if err := prommetrics.Register(reg, prommetrics.Sources{Factory: f}); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	defer srv.Close()

	f.Start(ctx)
	defer f.Shutdown() // saves the snapshot
	fmt.Fprintf(out, "caching the pods of node %q on %s; metrics on http://%s/metrics\n", *node, cfg.Host, ln.Addr())
	if err := f.Wait(ctx); err != nil {
		return err
	}
	fmt.Fprintf(out, "synced: %d pods\n", pods.Stats().Objects)
	<-ctx.Done()
	return nil
}

// demo is a fake API server with a few pods on two nodes.
func demo() *watchtest.Server {
	s := watchtest.NewServer()
	for i := range 6 {
		s.Create(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":"pod-%d","namespace":"default"},"spec":{"nodeName":"node-%d"}}`, i, i%2+1))
	}
	return s
}
