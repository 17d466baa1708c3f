package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/selector"
)

// Default bounds of a forwarded request.
const (
	// DefaultProxyTimeout bounds a forwarded request that is not
	// long-running: kube-apiserver's own limit on such a request is a
	// minute.
	DefaultProxyTimeout = time.Minute
	// DefaultProxyWatchHeaderTimeout bounds a forwarded watch's wait for
	// its response headers, which the API server sends once the watch is
	// registered.
	DefaultProxyWatchHeaderTimeout = time.Minute
	// DefaultProxyMaxWatch bounds a forwarded watch's stream: kube-apiserver
	// ends its watches within twice its 30-minute minimum request timeout.
	DefaultProxyMaxWatch = time.Hour
)

// proxyRetryAfter is the Retry-After, in seconds, of a request refused
// because the API server is unreachable: the informers retry it sooner.
const proxyRetryAfter = 5

// Proxy forwards to the API server what a cache cannot answer completely:
// a write, a resource not cached, a selector wider than the informer's
// (decision 45). A request is forwarded only with the client's own bearer
// token, as it sent it, and only to the API server the Proxy was made
// for; the node cache's own credentials (its token, its client
// certificate) are never lent to a client. A request without a bearer
// token of its own (one through a unix socket, say) is refused with a 403
// that says why. While the API server cannot be reached a request is
// refused with a 503 and Retry-After; every forwarded request is bounded
// in time (Timeout, or for a watch, an exec and the like
// WatchHeaderTimeout and MaxWatch), and a watch's stream flows through
// unbuffered.
//
// Set the fields before serving; the zero value of each is its default.
type Proxy struct {
	// Timeout bounds a forwarded request that is not long-running (see
	// WatchHeaderTimeout), from sending it to the end of its answer;
	// DefaultProxyTimeout when 0.
	Timeout time.Duration
	// WatchHeaderTimeout bounds a forwarded watch's wait for its response
	// headers; DefaultProxyWatchHeaderTimeout when 0. So it does for the
	// other long-running requests kube-apiserver knows: a pod's exec,
	// attach, port-forward, proxy and log.
	WatchHeaderTimeout time.Duration
	// MaxWatch bounds a forwarded watch's (or other long-running
	// request's) stream; DefaultProxyMaxWatch when 0.
	MaxWatch time.Duration

	host  *url.URL
	rp    *httputil.ReverseProxy
	stats proxyStats
}

type proxyStats struct {
	forwarded, unreachable, refused atomic.Int64
}

// NewProxy returns a Proxy to the API server cfg describes: its Host, TLS
// and proxy settings are used, its credentials never (a credential-free
// copy is made; cfg is not changed).
func NewProxy(cfg *kubeconfig.Config) (*Proxy, error) {
	if cfg == nil {
		return nil, errors.New("cacheserve: new proxy: no config")
	}
	bare := &kubeconfig.Config{
		Host: cfg.Host, CAData: cfg.CAData, CAFile: cfg.CAFile, ServerName: cfg.ServerName, Insecure: cfg.Insecure,
		ProxyURL: cfg.ProxyURL, Transport: cfg.Transport, KeepAlive: cfg.KeepAlive,
		PingAfter: cfg.PingAfter, PingTimeout: cfg.PingTimeout, Clock: cfg.Clock,
	}
	rt, err := bare.RoundTripper()
	if err != nil {
		return nil, fmt.Errorf("cacheserve: new proxy: %w", err)
	}
	host, err := url.Parse(cfg.Host) // RoundTripper checked it
	if err != nil {
		return nil, fmt.Errorf("cacheserve: new proxy: %w", err)
	}
	p := &Proxy{host: host}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(host)
			// The Host header the API server's certificate names, not the
			// cache's; no X-Forwarded-* (Rewrite drops the client's).
			pr.Out.Host = ""
		},
		Transport:     rt,
		FlushInterval: -1, // every write of a watch reaches the client at once
		ErrorHandler:  p.failed,
		// A stream the client or the API server cut is no error of the
		// cache's: nothing is logged.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	return p, nil
}

// ProxyStats counts what a Proxy did.
type ProxyStats struct {
	Forwarded   int64 // requests sent to the API server
	Unreachable int64 // requests refused, or failed, because it did not answer
	Refused     int64 // requests refused for want of the client's own bearer token
}

// Stats returns the Proxy's counters.
func (p *Proxy) Stats() ProxyStats {
	return ProxyStats{Forwarded: p.stats.forwarded.Load(), Unreachable: p.stats.unreachable.Load(), Refused: p.stats.refused.Load()}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// bearer reports whether req carries a bearer token of its own.
func bearer(req *http.Request) (string, bool) {
	h := req.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// noCredentials is the 403 for a request the cache would forward but
// cannot: it has no bearer token of its own, and the cache never lends
// its credentials.
func noCredentials(why string) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusForbidden, Reason: "Forbidden", Details: &apiserve.StatusDetails{},
		Message: why + "; it forwards such a request to the API server only with the client's own bearer token, " +
			"and this request has none (the cache never lends its own credentials)"}
}

// forward sends req to the API server with the client's own bearer token;
// why is what the cache could not answer, said if it cannot forward. A
// long-running request (a watch, an exec) is bounded as a watch is.
func (p *Proxy) forward(w http.ResponseWriter, req *http.Request, why string, long bool) {
	if _, ok := bearer(req); !ok {
		p.stats.refused.Add(1)
		noCredentials(why).Write(w)
		return
	}
	// Every header but Authorization is the client's as it sent it; of
	// credentials, only the bearer token goes (a Cookie, say, never).
	out := req.Clone(req.Context())
	out.Header.Del("Cookie")
	p.stats.forwarded.Add(1)
	if !long {
		ctx, cancel := context.WithTimeoutCause(req.Context(), orDefault(p.Timeout, DefaultProxyTimeout), errTimeout)
		defer cancel()
		p.rp.ServeHTTP(w, out.WithContext(withWhy(ctx, why)))
		return
	}
	ctx, cancel := context.WithTimeoutCause(req.Context(), orDefault(p.MaxWatch, DefaultProxyMaxWatch), errTimeout)
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	// The headers must come within WatchHeaderTimeout; the stream then
	// flows until MaxWatch, the client or the API server ends it.
	headers := make(chan struct{})
	timer := time.AfterFunc(orDefault(p.WatchHeaderTimeout, DefaultProxyWatchHeaderTimeout), func() {
		select {
		case <-headers:
		default:
			stop(errTimeout)
		}
	})
	defer timer.Stop()
	p.rp.ServeHTTP(&headerSignal{ResponseWriter: w, headers: headers}, out.WithContext(withWhy(ctx, why)))
}

// headerSignal closes headers when the response's headers are written.
type headerSignal struct {
	http.ResponseWriter
	headers chan struct{}
	closed  bool
}

func (h *headerSignal) WriteHeader(code int) {
	if !h.closed {
		h.closed = true
		close(h.headers)
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *headerSignal) Write(b []byte) (int, error) {
	if !h.closed {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the writer's Flush.
func (h *headerSignal) Unwrap() http.ResponseWriter { return h.ResponseWriter }

func (h *headerSignal) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// errTimeout is the cause of a forwarded request's context that ran out
// of time.
var errTimeout = errors.New("the API server did not answer in time")

type whyKey struct{}

// localKey marks a forwarded request the cache answers itself when the
// API server does not: discovery.
type localKey struct{}

func withWhy(ctx context.Context, why string) context.Context {
	return context.WithValue(ctx, whyKey{}, why)
}

// failed answers a request the API server did not answer: 504 if it ran
// out of time, 503 with Retry-After if it could not be reached. The
// error's text is the transport's (an address, never a header).
func (p *Proxy) failed(w http.ResponseWriter, req *http.Request, err error) {
	timedOut := errors.Is(context.Cause(req.Context()), errTimeout)
	if req.Context().Err() != nil && !timedOut {
		return // the client left
	}
	p.stats.unreachable.Add(1)
	if local, ok := req.Context().Value(localKey{}).(http.HandlerFunc); ok {
		local(w, req)
		return
	}
	why, _ := req.Context().Value(whyKey{}).(string)
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its URL is the API server's; its text is said below
	}
	if timedOut {
		(&apiserve.Error{Code: http.StatusGatewayTimeout, Reason: "Timeout", Details: &apiserve.StatusDetails{RetryAfterSeconds: proxyRetryAfter},
			Message: fmt.Sprintf("%s; the API server at %s did not answer in time", why, p.host.Redacted())}).Write(w)
		return
	}
	unreachable(fmt.Sprintf("%s; the API server at %s is unreachable (%v)", why, p.host.Redacted(), err)).Write(w)
}

// unreachable is the 503 for what needs the API server while it does not
// answer.
func unreachable(msg string) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusServiceUnavailable, Reason: "ServiceUnavailable", Message: msg,
		Details: &apiserve.StatusDetails{RetryAfterSeconds: proxyRetryAfter}}
}

// readsOnly refuses a write when no Proxy forwards it.
func readsOnly() *apiserve.Error {
	return &apiserve.Error{Code: http.StatusMethodNotAllowed, Reason: "MethodNotAllowed",
		Message: "this listwatch cache serves reads only: send writes to the API server", Details: &apiserve.StatusDetails{}}
}

// forwardOr forwards to the Proxy what the cache cannot answer (e says
// why), or writes e: a write, a path the cache does not serve, a read it
// cannot answer completely.
func (s *Server) forwardOr(w http.ResponseWriter, req *http.Request, e *apiserve.Error) {
	if s.Proxy == nil || !forwardable(req, e) {
		e.Write(w)
		return
	}
	why := e.Message
	switch {
	case req.Method != http.MethodGet:
		why = "this listwatch cache serves reads only"
	case e.Code == http.StatusNotFound:
		why = "this listwatch cache does not serve " + req.URL.Path
	}
	s.Proxy.forward(w, req, why, longRunning(req))
}

// longRunning reports whether a request may last as long as a watch:
// kube-apiserver's long-running requests, a watch or a pod's exec,
// attach, port-forward, proxy or log.
func longRunning(req *http.Request) bool {
	if w := req.URL.Query().Get("watch"); w == "1" || w == "true" {
		return true
	}
	p, e := apiserve.ParsePath(req.URL.Path)
	if e != nil {
		return false
	}
	switch p.Subresource {
	case "exec", "attach", "portforward", "proxy", "log":
		return true
	}
	return false
}

func forwardable(req *http.Request, e *apiserve.Error) bool {
	return req.Method != http.MethodGet || strings.HasPrefix(e.Message, cannotAnswer) ||
		e.Code == http.StatusNotFound && e.Message == apiserve.UnknownResource().Message
}

// answerable says why the cache cannot answer a read completely, before
// it starts answering, so that a Proxy can take it instead: a list or
// watch whose selectors do not imply the informer's, a GET of an object a
// cache with selectors lacks (upstream may hold it).
func (s *Server) answerable(rt route, o httpwatch.ListOptions, watch bool) *apiserve.Error {
	if rt.name == "" || watch {
		_, e := parseScope(rt, o)
		return e
	}
	if !rt.sv.selective() {
		return nil
	}
	if obj, _, synced := rt.sv.cache.get(rt.namespace, rt.name); synced && obj == nil {
		return rt.sv.covers(selector.Everything(), selector.FieldSelector{})
	}
	return nil
}

// isDiscovery reports whether path is a discovery document's:
// /api, /api/VERSION, /apis, /apis/GROUP, /apis/GROUP/VERSION.
func isDiscovery(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch parts[0] {
	case "api":
		return len(parts) <= 2
	case "apis":
		return len(parts) <= 3
	}
	return false
}

// serveDiscovery answers discovery: with a Proxy and a client's bearer
// token, the API server's (so that kubectl finds the resources the cache
// forwards), and the cache's own, of what it serves, when the API server
// does not answer or nothing can be forwarded.
func (s *Server) serveDiscovery(w http.ResponseWriter, req *http.Request) bool {
	if !isDiscovery(req.URL.Path) || req.Method != http.MethodGet {
		return false
	}
	local := func(w http.ResponseWriter, req *http.Request) {
		if !apiserve.ServeDiscovery(w, req, s.resources()) {
			apiserve.UnknownResource().Write(w)
		}
	}
	if _, ok := bearer(req); !ok || s.Proxy == nil {
		local(w, req)
		return true
	}
	ctx := context.WithValue(req.Context(), localKey{}, http.HandlerFunc(local))
	s.Proxy.forward(w, req.WithContext(ctx), "discovery", false)
	return true
}
