package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// namespacedWatches is how many namespaced watches of configmaps
// kube-apiserver is serving (apiserver_longrunning_requests).
func (b *bench) namespacedWatches(ctx context.Context) (int, error) {
	body, err := get(ctx, b.realHC, b.cfg.Host+"/metrics")
	if err != nil {
		return 0, err
	}
	defer body.Close()
	sc := bufio.NewScanner(body)
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "apiserver_longrunning_requests{") && strings.Contains(l, `resource="configmaps"`) &&
			strings.Contains(l, `scope="namespace"`) && strings.Contains(l, `verb="WATCH"`) {
			v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
			n += int(v)
		}
	}
	return n, sc.Err()
}

// settledWatches reads namespacedWatches until it stops changing (three
// reads alike, 300 ms apart, within 30 s): informers open their watch
// after they sync.
func (b *bench) settledWatches(ctx context.Context) (int, error) {
	var last []int
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); {
		n, err := b.namespacedWatches(ctx)
		if err != nil {
			return 0, err
		}
		last = append(last, n)
		if l := len(last); l >= 3 && last[l-1] == last[l-2] && last[l-2] == last[l-3] {
			return n, nil
		}
		time.Sleep(300 * time.Millisecond) // a measurement's pace, not a synchronisation
	}
	return 0, fmt.Errorf("the count of watches never settled: %v", last)
}

// upstreamWatches counts the watches kube-apiserver serves for n
// informers of the namespace's configmaps, half client-go and half
// listwatch, through a served cache and directly.
func (b *bench) upstreamWatches(ctx context.Context, n int) ([]row, error) {
	for i := range 5 {
		if _, err := b.real.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: b.ns}).Create(ctx,
			fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c%d"},"data":{"k":"v"}}`, i)); err != nil {
			return nil, err
		}
	}
	base, err := b.settledWatches(ctx)
	if err != nil {
		return nil, err
	}
	url, stopServed, err := b.serveConfigMaps(ctx)
	if err != nil {
		return nil, err
	}
	stopLocal, err := b.informers(ctx, n, &kubeconfig.Config{Host: url, QPS: -1}, &rest.Config{Host: url, QPS: -1})
	if err != nil {
		stopServed()
		return nil, err
	}
	throughCache, err := b.settledWatches(ctx)
	stopLocal()
	stopServed()
	if err != nil {
		return nil, err
	}
	realRest := &rest.Config{Host: b.cfg.Host, BearerToken: b.cfg.BearerToken, TLSClientConfig: rest.TLSClientConfig{CAFile: b.cfg.CAFile}, QPS: -1}
	stopDirect, err := b.informers(ctx, n, b.cfg, realRest)
	if err != nil {
		return nil, err
	}
	direct, err := b.settledWatches(ctx)
	stopDirect()
	if err != nil {
		return nil, err
	}
	return []row{{fmt.Sprintf("upstream watches for %d local informers (%d client-go, %d listwatch) of one resource", n, n/2, n-n/2),
		strconv.Itoa(throughCache - base), strconv.Itoa(direct - base), "1 against 50"}}, nil
}

// serveConfigMaps serves the namespace's configmaps on a loopback port
// until stop.
func (b *bench) serveConfigMaps(ctx context.Context) (string, func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	rc := b.real.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: b.ns})
	rc.KeepManagedFields = true // whole objects: no Warning to every client-go request
	inf := listwatch.NewInformer(rc, 0)
	inf.Logger = slog.New(slog.DiscardHandler)
	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }}
	if _, err := srv.Add(inf, rc, apiserve.APIResource{}); err != nil {
		cancel()
		return "", nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		return "", nil, err
	}
	ran := make(chan struct{})
	go func() { defer close(ran); inf.Run(ctx) }()
	go func() { _ = srv.Serve(ctx, l) }()
	if err := inf.Wait(ctx); err != nil {
		cancel()
		return "", nil, err
	}
	return "http://" + l.Addr().String(), func() { cancel(); <-ran }, nil
}

// informers runs n informers of the namespace's configmaps, half
// client-go (each its own factory: a shared one would share one watch)
// and half listwatch, until stop, and waits for them to sync.
func (b *bench) informers(ctx context.Context, n int, lwCfg *kubeconfig.Config, cgCfg *rest.Config) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop := func() { cancel(); wg.Wait() }
	lc, err := httpwatch.NewClient(lwCfg)
	if err != nil {
		cancel()
		return nil, err
	}
	lc.Logger = slog.New(slog.DiscardHandler)
	dc, err := dynamic.NewForConfig(cgCfg)
	if err != nil {
		cancel()
		return nil, err
	}
	var synced []cache.InformerSynced
	for i := range n {
		if i%2 == 0 {
			f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, b.ns, nil)
			inf := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Informer()
			f.Start(ctx.Done())
			wg.Go(func() { <-ctx.Done(); f.Shutdown() })
			synced = append(synced, inf.HasSynced)
			continue
		}
		inf := listwatch.NewInformer(lc.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: b.ns}), 0)
		inf.Logger = slog.New(slog.DiscardHandler)
		inf.Reflector.Name = fmt.Sprintf("local %d", i)
		wg.Go(func() { inf.Run(ctx) })
		synced = append(synced, inf.HasSynced)
	}
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	if !cache.WaitForCacheSync(wctx.Done(), synced...) {
		stop()
		return nil, fmt.Errorf("%d informers did not sync within 2 minutes", n)
	}
	return stop, nil
}

// lists times lists of the namespace's pods on each server.
func (b *bench) lists(ctx context.Context, reps int) ([]row, error) {
	path := "/api/v1/namespaces/" + b.ns + "/pods"
	type target struct {
		name, url string
		hc        *http.Client
	}
	var out []string
	for _, t := range []target{{"served", b.served + path, b.servedHC}, {"real", b.cfg.Host + path, b.realHC}, {"real rv=0", b.cfg.Host + path + "?resourceVersion=0", b.realHC}} {
		var took []time.Duration
		var size int64
		for range reps {
			start := time.Now()
			body, err := get(ctx, t.hc, t.url)
			if err != nil {
				return nil, err
			}
			size, err = io.Copy(io.Discard, body)
			body.Close()
			if err != nil {
				return nil, err
			}
			took = append(took, time.Since(start))
		}
		slices.Sort(took)
		out = append(out, fmt.Sprintf("median %s, max %s (%.1f MiB)", ms(took[len(took)/2]), ms(took[len(took)-1]), mib(size)))
	}
	return []row{{"list every pod (JSON, uncompressed)", out[0], out[1] + "; from its watch cache (rv=0): " + out[2], "≤ 100 ms"}}, nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// listVersion is the version a list of one pod answers at.
func listVersion(ctx context.Context, hc *http.Client, url string) (string, error) {
	body, err := get(ctx, hc, url+"?limit=1")
	if err != nil {
		return "", err
	}
	defer body.Close()
	var l struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	return l.Metadata.ResourceVersion, json.NewDecoder(body).Decode(&l)
}
