package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// lab is the server, the proxies in front of it, the router the clients
// dial, the informers and a direct client for the writer and the judge.
type lab struct {
	env         map[string]string
	direct      *httpwatch.Client
	cms         *httpwatch.ResourceClient
	ns          string
	held, fresh *toxiproxy.Proxy
	router      *router
	observers   []*observer
}

func newLab(ctx context.Context) (*lab, error) {
	l := &lab{env: map[string]string{}}
	for _, k := range []string{"REALAPI_URL", "REALAPI_TOKEN", "REALAPI_CA", "REALAPI_DIR", "REALAPI_TOXIPROXY"} {
		if l.env[k] = os.Getenv(k); l.env[k] == "" {
			return nil, fmt.Errorf(`%s not set: start a server with eval "$(scripts/realapi.sh start)"`, k)
		}
	}
	var err error
	l.direct, err = httpwatch.NewClient(&kubeconfig.Config{Host: l.env["REALAPI_URL"], BearerToken: l.env["REALAPI_TOKEN"], CAFile: l.env["REALAPI_CA"], QPS: -1})
	if err != nil {
		return nil, err
	}
	l.direct.Logger = slog.New(slog.DiscardHandler)
	if err := l.fill(ctx, 1000); err != nil {
		return nil, err
	}
	if err := l.proxies(); err != nil {
		return nil, err
	}
	for _, mk := range []func(context.Context, string, bool) (*observer, error){l.listwatch, l.clientGo} {
		for _, h1 := range []bool{false, true} {
			o, err := mk(ctx, "https://"+l.router.addr(), h1)
			if err != nil {
				return nil, err
			}
			l.observers = append(l.observers, o)
		}
	}
	want, err := l.serverState(ctx)
	if err != nil {
		return nil, err
	}
	for _, o := range l.observers {
		if _, ok := o.waitEqual(want, time.Now(), time.Minute); !ok {
			return nil, fmt.Errorf("%s did not sync within a minute", o.name)
		}
	}
	return l, nil
}

// fill makes a fresh namespace of n configmaps.
func (l *lab) fill(ctx context.Context, n int) error {
	l.ns = fmt.Sprintf("chaos-bench-%d", rand.Uint32()%100000)
	_, err := l.direct.Resource(httpwatch.Resource{Version: "v1", Resource: "namespaces"}).Create(ctx,
		fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, l.ns))
	if err != nil {
		return err
	}
	l.cms = l.direct.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: l.ns})
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for w := range errs {
		wg.Go(func() {
			for i := w; i < n; i += len(errs) {
				if _, err := l.cms.Create(ctx, configMap(l.ns, fmt.Sprintf("cm-%04d", i), "0")); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func configMap(ns, name, value string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"v":%q}}`, name, ns, value)
}

// proxies makes the two toxiproxy proxies and the router in front of them.
func (l *lab) proxies() error {
	u, err := url.Parse(l.env["REALAPI_URL"])
	if err != nil {
		return err
	}
	toxi := toxiproxy.NewClient(l.env["REALAPI_TOXIPROXY"])
	tag := rand.Uint32()
	if l.held, err = toxi.CreateProxy(fmt.Sprintf("bench-held-%d", tag), "127.0.0.1:0", u.Host); err != nil {
		return err
	}
	if l.fresh, err = toxi.CreateProxy(fmt.Sprintf("bench-fresh-%d", tag), "127.0.0.1:0", u.Host); err != nil {
		return err
	}
	l.router, err = newRouter(l.held.Listen)
	return err
}

func (l *lab) close() {
	for _, o := range l.observers {
		o.stop()
	}
	if l.router != nil {
		l.router.ln.Close()
	}
	for _, p := range []*toxiproxy.Proxy{l.held, l.fresh} {
		if p != nil {
			_ = p.Delete()
		}
	}
	if l.ns != "" {
		_ = l.direct.Resource(httpwatch.Resource{Version: "v1", Resource: "namespaces"}).Delete(context.Background(), l.ns)
	}
}

// serverState lists the configmaps on the direct path: key → version.
func (l *lab) serverState(ctx context.Context) (map[string]string, error) {
	p, err := l.cms.List(ctx, httpwatch.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(p.Items))
	for _, o := range p.Items {
		out[listwatch.Key(o)] = o.ResourceVersion()
	}
	return out, nil
}

// router forwards each new connection to the address it holds then; the
// connections it made keep their target.
type router struct {
	ln     net.Listener
	target atomic.Pointer[string]
}

func newRouter(target string) (*router, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &router{ln: ln}
	r.route(target)
	go r.serve()
	return r, nil
}

func (r *router) addr() string        { return r.ln.Addr().String() }
func (r *router) route(target string) { r.target.Store(&target) }

func (r *router) serve() {
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		go pipe(c, *r.target.Load())
	}
}

func pipe(c net.Conn, target string) {
	s, err := net.DialTimeout("tcp", target, 10*time.Second)
	if err != nil {
		c.Close()
		return
	}
	go func() { _, _ = io.Copy(s, c); s.Close(); c.Close() }()
	_, _ = io.Copy(c, s)
	s.Close()
	c.Close()
}

// observer is one client's informer, read as key → resourceVersion.
type observer struct {
	name  string
	state func() map[string]string
	stop  func()
	// lists counts the full syncs the informer asked for: the first page
	// of a list, or a watch-list, of the configmaps.
	lists *listCounter
}

// listCounter counts the lists and watch-lists of configmaps that pass
// through a transport: each a relist once the informer has synced.
type listCounter struct{ n atomic.Int64 }

func (c *listCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		q := req.URL.Query()
		if strings.HasSuffix(req.URL.Path, "/configmaps") && q.Get("continue") == "" &&
			(q.Get("watch") == "" || q.Get("sendInitialEvents") == "true") {
			c.n.Add(1)
		}
		return rt.RoundTrip(req)
	})
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// waitEqual polls o until its cache equals want, at most limit; it
// returns the time from `from` until then.
func (o *observer) waitEqual(want map[string]string, from time.Time, limit time.Duration) (time.Duration, bool) {
	deadline := time.Now().Add(limit)
	for {
		if equal(o.state(), want) {
			return time.Since(from), true
		}
		if time.Now().After(deadline) {
			return 0, false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// listwatch runs a listwatch informer with the library's defaults; h1
// keeps it to HTTP/1.1 through a transport that offers only http/1.1.
func (l *lab) listwatch(ctx context.Context, host string, h1 bool) (*observer, error) {
	cfg := &kubeconfig.Config{Host: host, BearerToken: l.env["REALAPI_TOKEN"], CAFile: l.env["REALAPI_CA"]}
	name := "listwatch HTTP/2"
	if h1 {
		name = "listwatch HTTP/1.1"
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.TLSClientConfig = &tls.Config{RootCAs: pool, NextProtos: []string{"http/1.1"}}
		t.ForceAttemptHTTP2 = false
		cfg.CAFile, cfg.Transport = "", t
	}
	lists := &listCounter{}
	if cfg.Transport != nil {
		cfg.Transport = lists.wrap(cfg.Transport)
	} else {
		cfg.WrapTransport = lists.wrap
	}
	c, err := httpwatch.NewClient(cfg)
	if err != nil {
		return nil, err
	}
	c.Logger = slog.New(slog.DiscardHandler)
	if *debug {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})).With("client", name)
	}
	inf := listwatch.NewInformer(c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: l.ns}), 0)
	inf.Logger = c.Logger
	ictx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { inf.Run(ictx); close(done) }()
	state := func() map[string]string {
		out := map[string]string{}
		for _, o := range inf.Indexer().List() {
			out[listwatch.Key(o)] = o.ResourceVersion()
		}
		return out
	}
	return &observer{name: name, state: state, stop: func() { cancel(); <-done }, lists: lists}, nil
}

// clientGo runs client-go's dynamic shared informer with its defaults; h1
// sets rest.Config's NextProtos to http/1.1 alone.
func (l *lab) clientGo(ctx context.Context, host string, h1 bool) (*observer, error) {
	rc := &rest.Config{Host: host, BearerToken: l.env["REALAPI_TOKEN"], TLSClientConfig: rest.TLSClientConfig{CAFile: l.env["REALAPI_CA"]}}
	name := "client-go HTTP/2"
	if h1 {
		name = "client-go HTTP/1.1"
		rc.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	lists := &listCounter{}
	rc.WrapTransport = lists.wrap
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, l.ns, nil)
	inf := f.ForResource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Informer()
	stop := make(chan struct{})
	f.Start(stop)
	state := func() map[string]string {
		out := map[string]string{}
		for _, o := range inf.GetStore().List() {
			u := o.(*unstructured.Unstructured)
			out[u.GetNamespace()+"/"+u.GetName()] = u.GetResourceVersion()
		}
		return out
	}
	return &observer{name: name, state: state, stop: func() { close(stop); f.Shutdown() }, lists: lists}, nil
}
