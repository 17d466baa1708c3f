package cacheserve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/selector"
)

// ErrNotWhole is returned by Add for a source whose objects are not the
// resource's objects (a projection, a transform, metadata only): serving
// them as if they were would be a partial answer presented as whole
// (decision 43).
var ErrNotWhole = errors.New("the source's objects are not whole")

// ErrDenied is what a Server without Authorize answers a request that did
// not come through a listener of ListenUnix.
var ErrDenied = errors.New("denied: only requests through the unix socket are allowed unless Server.Authorize says otherwise")

// Default timings, as kube-apiserver's watch cache has them.
const (
	DefaultTooLargeWait  = 3 * time.Second
	DefaultBookmarkEvery = time.Minute
)

// managedFieldsWarning is the Warning every response of a cache whose
// objects lack metadata.managedFields carries (decision 43).
const managedFieldsWarning = `299 - "served from a listwatch cache: objects lack metadata.managedFields"`

// Server serves the caches of informers over the Kubernetes list and
// watch API: discovery and /version, GET, LIST and WATCH of the resources
// added, each answered from its Cache exactly to the resourceVersion; and
// refuses, with a Status that says why, whatever a cache cannot answer
// completely: a write, a resource not served, a namespace or selector
// wider than the informer's (decision 43).
//
// Set the fields before serving; the zero value of each is its default.
type Server struct {
	// Authorize decides each request that did not come through a
	// listener of ListenUnix (those are allowed: the socket's file mode is
	// their authorization): nil allows it, an error denies it with a 403
	// that carries the error's text. A nil Authorize denies them all:
	// default deny. Nothing is ever authorized by a header a client
	// chooses, User-Agent included. An Authorizer's method value fits:
	// Reviewer.Authorize asks the API server (decision 45); an
	// *apiserve.Error it returns is answered as it is (a 401, a 503).
	Authorize func(*http.Request) error
	// Version is what /version answers.
	Version apiserve.Version
	// Clock tells the time for waits, bookmarks and watch timeouts.
	Clock clock.Clock
	// TooLargeWait is how long a list or watch from a version the cache
	// has not reached waits for it before the "too large" answer;
	// DefaultTooLargeWait when 0.
	TooLargeWait time.Duration
	// BookmarkEvery is how often a watch that allows bookmarks gets one;
	// DefaultBookmarkEvery when 0.
	BookmarkEvery time.Duration
	// Proxy, if set, answers what the cache cannot answer completely (a
	// write, a resource not cached, a selector wider than the informer's)
	// from the API server, with the client's own credentials (decision 45);
	// nil refuses it with a Status that says why.
	Proxy *Proxy

	mu    sync.RWMutex
	byRes map[string]*served
	// upstream is what the informers have heard of the API server: the
	// Warning and Stats of a cache that may be behind it (decision 45).
	upstream health
}

// served is one resource the server answers for.
type served struct {
	res       apiserve.APIResource
	cache     *Cache
	namespace string // the informer's namespace; "" all
	labels    selector.Selector
	fields    selector.FieldSelector
	warning   string
	inf       *listwatch.Informer
	guard     *guard
}

func resID(group, version, resource string) string { return group + "/" + version + "/" + resource }

// Add serves the objects inf reads through src as the resource r (zero:
// the built-in resource src addresses), from a Cache it mirrors to
// (listwatch.Informer.Mirror). Call it before inf runs. A source whose
// objects are not whole is refused (ErrNotWhole); one that drops
// metadata.managedFields, the default, is served with a Warning on every
// response that says so. A warm-started informer (Snapshot.Dir) is served
// from its restored snapshot at once. Add sets inf.Mirror to a guard in
// front of the Cache, and wraps inf.OnError (still called) to hear of
// failures to reach the API server (decision 45).
func (s *Server) Add(inf *listwatch.Informer, src *httpwatch.ResourceClient, r apiserve.APIResource) (*Cache, error) {
	addr := src.Resource()
	if src.MetadataOnly || src.Projection != nil || src.Transform != nil {
		return nil, fmt.Errorf("serve %s: %w: it has a projection, a transform or metadata only", addr, ErrNotWhole)
	}
	if r.Resource == "" {
		var ok bool
		if r, ok = apiserve.BuiltInResource(addr.Group, addr.Version, addr.Resource); !ok {
			return nil, fmt.Errorf("serve %s: not a built-in resource: pass its APIResource", addr)
		}
	}
	if inf.Mirror != nil {
		return nil, fmt.Errorf("serve %s: the informer already has a Mirror", addr)
	}
	ls, err := selector.Parse(inf.Identity().LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("serve %s: the informer's label selector: %w", addr, err)
	}
	fsel, err := selector.ParseFields(inf.Identity().FieldSelector)
	if err != nil {
		return nil, fmt.Errorf("serve %s: the informer's field selector: %w", addr, err)
	}
	sv := &served{res: r, cache: NewCache(), namespace: addr.Namespace, labels: ls, fields: fsel, inf: inf}
	sv.cache.log.Clock = s.Clock // the history's ages; nil is the real clock
	if !src.KeepManagedFields {
		sv.warning = managedFieldsWarning
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := resID(r.Group, r.Version, r.Resource)
	if s.byRes[id] != nil {
		return nil, fmt.Errorf("serve %s: already served", addr)
	}
	if s.byRes == nil {
		s.byRes = map[string]*served{}
	}
	s.byRes[id] = sv
	s.mirror(inf, sv)
	return sv.cache, nil
}

// Informers are the informers whose caches s serves, by resource: what
// a metrics exporter reports beside s's own figures.
func (s *Server) Informers() []*listwatch.Informer {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*listwatch.Informer, 0, len(s.byRes))
	for _, id := range slices.Sorted(maps.Keys(s.byRes)) {
		out = append(out, s.byRes[id].inf)
	}
	return out
}

func (s *Server) clock() clock.Clock {
	if s.Clock == nil {
		return clock.Real
	}
	return s.Clock
}

func (s *Server) tooLargeWait() time.Duration {
	if s.TooLargeWait <= 0 {
		return DefaultTooLargeWait
	}
	return s.TooLargeWait
}

func (s *Server) bookmarkEvery() time.Duration {
	if s.BookmarkEvery <= 0 {
		return DefaultBookmarkEvery
	}
	return s.BookmarkEvery
}

func (s *Server) resources() []apiserve.APIResource {
	s.mu.RLock()
	defer s.mu.RUnlock()
	rs := make([]apiserve.APIResource, 0, len(s.byRes))
	for _, sv := range s.byRes {
		r := sv.res
		r.Verbs = []string{"get", "list", "watch"}
		rs = append(rs, r)
	}
	return rs
}

type unixKey struct{}

// Serve answers requests from l until ctx is done, then closes the
// listener and ends every open watch. Requests through a listener of
// ListenUnix are marked as such for the default authorization.
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ReadHeaderTimeout: 10 * time.Second,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if _, ok := c.(*net.UnixConn); ok {
				if _, ours := l.(*unixListener); ours {
					return context.WithValue(ctx, unixKey{}, true)
				}
			}
			return ctx
		},
	}
	stop := context.AfterFunc(ctx, func() { _ = hs.Close() })
	defer stop()
	err := hs.Serve(l)
	if ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("cacheserve: serve: %w", err)
}

// unixListener is a listener of ListenUnix.
type unixListener struct{ *net.UnixListener }

// ListenUnix listens on a unix socket at path whose file mode is mode
// (0o600: its owner only): the simple local authorization, for Serve with
// a nil Server.Authorize. A socket file left at path by an earlier process
// is replaced; any other file there is an error.
func ListenUnix(path string, mode fs.FileMode) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("listen on %s: a file that is not a socket is there", path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("listen on %s: remove the old socket: %w", path, err)
		}
	}
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	// Connecting takes write permission: until this chmod the socket has
	// the umask's mode, which gives others none unless the umask does.
	if err := os.Chmod(path, mode); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("listen on %s: set its mode: %w", path, err)
	}
	return &unixListener{l}, nil
}

func (s *Server) authorize(req *http.Request) error {
	if req.Context().Value(unixKey{}) == true {
		return nil // the socket's file mode let it connect
	}
	if s.Authorize == nil {
		return ErrDenied
	}
	return s.Authorize(req)
}

func forbidden(err error) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusForbidden, Reason: "Forbidden", Message: "forbidden: " + err.Error(), Details: &apiserve.StatusDetails{}}
}

// notReady is the 429 kube-apiserver's watch cache answers before its
// first sync: never an empty list.
func notReady() *apiserve.Error {
	return &apiserve.Error{Code: http.StatusTooManyRequests, Reason: "TooManyRequests",
		Message: "Too many requests: storage is (re)initializing", Details: &apiserve.StatusDetails{RetryAfterSeconds: 1}}
}

// cannotAnswer starts the message of every refusal of incomplete: what a
// Proxy, if set, forwards instead (decision 45).
const cannotAnswer = "this listwatch cache cannot answer completely: "

// incomplete refuses what the cache cannot answer completely.
func incomplete(format string, args ...any) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusBadRequest, Reason: "BadRequest",
		Message: cannotAnswer + fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusBadRequest, Reason: "BadRequest", Message: fmt.Sprintf(format, args...)}
}

// ServeHTTP answers one request (see Server).
func (s *Server) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	s.warnIfStale(w)
	if err := s.authorize(req); err != nil {
		denied(err).Write(w)
		return
	}
	opts, watch, optsErr := httpwatch.ParseListOptions(req.URL.Query())
	if !watch {
		var done func()
		w, done = apiserve.Compress(w, req)
		defer done()
	}
	if req.Method == http.MethodGet && req.URL.Path == "/version" {
		s.Version.ServeHTTP(w, req)
		return
	}
	if s.serveDiscovery(w, req) {
		return
	}
	rt, e := s.route(req, watch)
	if e == nil && req.Method != http.MethodGet {
		e = readsOnly()
	}
	if e == nil && optsErr == nil {
		e = s.answerable(rt, opts, watch)
	}
	if e != nil {
		if rt.sv != nil && rt.sv.warning != "" && (s.Proxy == nil || !forwardable(req, e)) {
			w.Header().Add("Warning", rt.sv.warning) // answered here
		}
		s.forwardOr(w, req, e)
		return
	}
	if rt.sv.warning != "" {
		w.Header().Add("Warning", rt.sv.warning)
	}
	if optsErr != nil {
		badRequest("%v", optsErr).Write(w)
		return
	}
	out, e := apiserve.Negotiate(req.Header.Get("Accept"))
	if e != nil {
		e.Write(w)
		return
	}
	if out.Table {
		inc, e := apiserve.ParseIncludeObject(req.URL.Query().Get("includeObject"))
		if e != nil {
			e.Write(w)
			return
		}
		rt.table = &apiserve.TableRequest{Output: out, Include: inc, Now: s.clock().Now()}
	}
	switch {
	case rt.name != "" && !watch:
		s.serveGet(w, rt)
	case watch:
		s.serveWatch(w, req, rt, opts)
	default:
		s.serveList(w, req, rt, opts)
	}
}

// route is what a request path addresses.
type route struct {
	sv        *served
	namespace string
	name      string
	table     *apiserve.TableRequest
}

// route maps /api/v1/[namespaces/NS/]RESOURCE[/NAME] and
// /apis/GROUP/VERSION/... to a served resource.
func (s *Server) route(req *http.Request, watch bool) (route, *apiserve.Error) {
	p, perr := apiserve.ParsePath(req.URL.Path)
	if perr != nil {
		return route{}, perr
	}
	group, version, resource := p.Group, p.Version, p.Resource
	rt := route{namespace: p.Namespace, name: p.Name}
	s.mu.RLock()
	rt.sv = s.byRes[resID(group, version, resource)]
	s.mu.RUnlock()
	if rt.sv == nil {
		return route{}, incomplete("%s is not cached here", resourcePath(group, version, resource))
	}
	if p.Subresource != "" {
		return route{}, incomplete("subresource %q of %s is not cached here", p.Subresource, resource)
	}
	if rt.namespace != "" && !rt.sv.res.Namespaced || rt.name != "" && rt.sv.res.Namespaced && rt.namespace == "" {
		return route{}, apiserve.UnknownResource()
	}
	if rt.sv.namespace != "" && rt.namespace != rt.sv.namespace {
		ns := rt.namespace
		if ns == "" {
			ns = "all namespaces"
		}
		return route{}, incomplete("it holds %s in namespace %s only, not in %s", resource, rt.sv.namespace, ns)
	}
	return rt, nil
}

func resourcePath(group, version, resource string) string {
	if group == "" {
		return resource + "." + version
	}
	return resource + "." + version + "." + group
}

// covers reports why the cache cannot answer a request selecting f: the
// informer's selectors must each be part of the request's, so that every
// object the request selects is in the cache.
func (sv *served) covers(ls selector.Selector, fs selector.FieldSelector) *apiserve.Error {
	have := map[string]bool{}
	for _, r := range ls.Requirements() {
		have[r.String()] = true
	}
	for _, r := range sv.labels.Requirements() {
		if !have[r.String()] {
			return incomplete("it holds only %s with labelSelector %q, which the request's %q does not imply", sv.res.Resource, sv.labels.String(), ls.String())
		}
	}
	haveF := map[string]bool{}
	for _, t := range fs.Terms() {
		haveF[t.String()] = true
	}
	for _, t := range sv.fields.Terms() {
		if !haveF[t.String()] {
			return incomplete("it holds only %s with fieldSelector %q, which the request's %q does not imply", sv.res.Resource, sv.fields.String(), fs.String())
		}
	}
	return nil
}

// selective reports whether the informer holds only part of the
// resource's objects (by its selectors), so that a missing object may
// exist upstream.
func (sv *served) selective() bool { return !sv.labels.Empty() || !sv.fields.Empty() }
