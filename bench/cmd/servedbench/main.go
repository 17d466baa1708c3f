// Command servedbench measures a served cache (package cacheserve) side by
// side with the kube-apiserver it mirrors, and prints a Markdown table:
//
//   - upstream watches: the apiserver_registered_watchers kube-apiserver
//     counts while 50 informers (half client-go, half listwatch) watch one
//     resource through the served cache, and while they watch it directly;
//   - a list of every pod of a namespace of 10,000 (JSON, uncompressed),
//     from each;
//   - fan-out: a burst of writes watched by 100 watchers on each, events
//     delivered per second, and each event's latency: on kube-apiserver
//     from the write's answer, on the served cache from the moment its
//     informer handed the event to the cache (the local hop); then the
//     same latencies for writes at a steady pace (20/s), as a node sees
//     its pods change;
//   - the served cache's heap against the JSON bytes of the objects, and
//     kube-apiserver's resident memory grown by them.
//
// It reads the server from the REALAPI_* variables scripts/realapi.sh
// exports:
//
//	eval "$(scripts/realapi.sh start)"
//	(cd bench && go run ./cmd/servedbench)
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

type options struct {
	pods, informers, watchers, events, lists, paced int
	rate                                            float64
}

func main() {
	var o options
	flag.IntVar(&o.pods, "pods", 10_000, "pods in the namespace listed and watched")
	flag.IntVar(&o.informers, "informers", 50, "local informers on one resource")
	flag.IntVar(&o.watchers, "watchers", 100, "watchers of the fan-out")
	flag.IntVar(&o.events, "events", 1000, "writes in the fan-out's burst")
	flag.IntVar(&o.lists, "lists", 20, "lists timed on each server")
	flag.IntVar(&o.paced, "paced", 300, "writes at a steady pace after the burst (0: none)")
	flag.Float64Var(&o.rate, "rate", 20, "the steady pace, writes per second")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "servedbench:", err)
		os.Exit(1)
	}
}

// bench is the real server and the served cache in front of it.
type bench struct {
	cfg      *kubeconfig.Config
	real     *httpwatch.Client
	realHC   *http.Client
	servedHC *http.Client
	served   string // the served cache's URL
	ns       string
	pods     int
	mirror   *stampMirror
}

func run(ctx context.Context, o options) error {
	cfg := &kubeconfig.Config{Host: os.Getenv("REALAPI_URL"), BearerToken: os.Getenv("REALAPI_TOKEN"), CAFile: os.Getenv("REALAPI_CA"), QPS: -1, Timeout: time.Minute}
	if cfg.Host == "" {
		return fmt.Errorf("REALAPI_URL is not set: eval \"$(scripts/realapi.sh start)\" first")
	}
	b := &bench{cfg: cfg, pods: o.pods, ns: fmt.Sprintf("servedbench-%d", time.Now().Unix()%100000)}
	var err error
	if b.real, err = httpwatch.NewClient(cfg); err != nil {
		return err
	}
	b.real.Logger = slog.New(slog.DiscardHandler)
	rt, err := cfg.RoundTripper()
	if err != nil {
		return err
	}
	b.realHC = &http.Client{Transport: rt}
	b.servedHC = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200, DisableCompression: true}}
	if err := b.createNamespace(ctx); err != nil {
		return err
	}
	defer b.deleteNamespace()

	var rows []row
	r, err := b.upstreamWatches(ctx, o.informers)
	if err != nil {
		return fmt.Errorf("count upstream watches: %w", err)
	}
	rows = append(rows, r...)
	rss0 := apiserverRSS()
	if err := b.fillPods(ctx, o.pods); err != nil {
		return fmt.Errorf("create %d pods: %w", o.pods, err)
	}
	stop, mem, err := b.serve(ctx)
	if err != nil {
		return err
	}
	defer stop()
	mem.apiserverGrowth = apiserverRSS() - rss0
	r, err = b.lists(ctx, o.lists)
	if err != nil {
		return fmt.Errorf("time lists: %w", err)
	}
	rows = append(rows, r...)
	r, err = b.fanOut(ctx, o.watchers, o.events, o.rate, o.paced)
	if err != nil {
		return fmt.Errorf("fan-out: %w", err)
	}
	rows = append(rows, r...)
	rows = append(rows, mem.rows()...)
	printTable(os.Stdout, o, rows)
	return nil
}

// serve starts the served cache of the namespace's pods on a loopback
// port, waits for its sync, and says what its heap grew by.
func (b *bench) serve(ctx context.Context) (func(), *memory, error) {
	ctx, cancel := context.WithCancel(ctx)
	rc := b.real.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: b.ns})
	rc.KeepManagedFields = true // whole objects, as kube-apiserver holds them
	before := heapAfterGC()
	inf := listwatch.NewInformer(rc, 0)
	inf.Logger = slog.New(slog.DiscardHandler)
	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }}
	if _, err := srv.Add(inf, rc, apiserve.APIResource{}); err != nil {
		cancel()
		return nil, nil, err
	}
	// Every event the informer hands the served cache is stamped on its
	// way: the start of the local hop.
	b.mirror = &stampMirror{next: inf.Mirror, at: map[string]time.Time{}}
	inf.Mirror = b.mirror
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return nil, nil, err
	}
	b.served = "http://" + l.Addr().String()
	ran := make(chan struct{})
	go func() { defer close(ran); inf.Run(ctx) }()
	go func() { _ = srv.Serve(ctx, l) }()
	stop := func() { cancel(); <-ran }
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Minute)
	defer wcancel()
	if err := inf.Wait(wctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("the served cache did not sync: %w", err)
	}
	mem := &memory{heap: heapAfterGC() - before}
	mem.jsonBytes, mem.objects, err = b.jsonBytes(ctx)
	return stop, mem, err
}
