package watchtest

import (
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
)

// maxBody bounds what a create or update may send.
const maxBody = 16 << 20

// route is what a request path addresses.
type route struct {
	st        *store
	namespace string
	name      string
	sub       string // "status" or "scale"
	verb      string
	// opts are the list or watch options of the query, or optsErr why
	// they do not parse.
	opts    httpwatch.ListOptions
	optsErr error
	// table is how a read answers as a Table; nil for JSON.
	table *apiserve.TableOutput
}

func (s *Server) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if q := req.URL.Query().Get("watch"); q != "true" && q != "1" {
		// Streams are never compressed; anything else large is, for a
		// client that asks (decision 40).
		var done func()
		w, done = apiserve.Compress(w, req)
		defer done()
	}
	if req.Method == http.MethodGet && req.URL.Path == "/version" {
		s.logRequest(Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()})
		s.Version.ServeHTTP(w, req)
		return
	}
	if s.serveDiscovery(w, req) {
		s.logRequest(Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()})
		return
	}
	rt, err := s.route(req)
	if err != nil && s.unknownGroup(req.URL.Path) {
		// The real server has no handler at all under a group it does
		// not serve: a plain-text 404, not a Status.
		s.logRequest(Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query()})
		http.NotFound(w, req)
		return
	}
	r := Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.Query(), Verb: rt.verb, Subresource: rt.sub, Namespace: rt.namespace, Name: rt.name}
	if rt.verb == "patch" {
		r.PatchType = mediaType(req.Header.Get("Content-Type"))
	}
	s.logRequest(r)
	if err == nil {
		err = s.negotiate(req, &rt)
	}
	if err != nil {
		err.Write(w)
		return
	}
	if f, ok := s.takeFailure(r); ok {
		e := failureError(f, rt.verb)
		if f.InStream && rt.verb == "watch" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(apiserve.AppendError(nil, e))
			return
		}
		e.Write(w)
		return
	}
	switch rt.verb {
	case "list", "watch":
		s.serveCollection(w, req, rt)
	case "get":
		s.serveGet(w, rt)
	default:
		s.serveWrite(w, req, rt)
	}
}

func (s *Server) serveGet(w http.ResponseWriter, rt route) {
	s.mu.Lock()
	o := rt.st.current(objectKey(rt.namespace, rt.name))
	s.mu.Unlock()
	if o == nil {
		notFound(rt.st.res, rt.name).Write(w)
		return
	}
	if rt.sub == "scale" {
		writeScale(w, http.StatusOK, rt.st.res, o)
		return
	}
	if rt.table != nil {
		rt.table.Write(w, [][]byte{apiserve.Whole(rt.st.prefix, o.body)}, apiserve.ListMeta{ResourceVersion: strconv.FormatInt(o.rv, 10)})
		return
	}
	writeObject(w, http.StatusOK, rt.st, o)
}

// negotiate reads what a request sends and asks for as the real server
// does (decision 40): a read answers JSON or, when asked, a Table; a body
// that is not JSON is a 415 that names what the server reads.
func (s *Server) negotiate(req *http.Request, rt *route) *apiserve.Error {
	switch rt.verb {
	case "create", "update":
		if e := apiserve.CheckBody(req.Header.Get("Content-Type")); e != nil {
			return (e)
		}
		return nil
	case "get", "list", "watch":
	default:
		return nil
	}
	out, e := apiserve.Negotiate(req.Header.Get("Accept"))
	if e != nil {
		return (e)
	}
	if !out.Table || rt.sub == "scale" {
		return nil
	}
	inc, e := apiserve.ParseIncludeObject(req.URL.Query().Get("includeObject"))
	if e != nil {
		return (e)
	}
	p := apiserve.PrinterFor(rt.st.res.Group, rt.st.res.Resource)
	if !rt.st.res.BuiltIn {
		p = apiserve.CustomPrinter(rt.st.res.PrinterColumns)
	}
	rt.table = &apiserve.TableOutput{Printer: p, Request: apiserve.TableRequest{Output: out, Include: inc, Now: s.Clock.Now()}}
	return nil
}

func writeObject(w http.ResponseWriter, code int, st *store, o *object) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(st.prefix)
	_, _ = w.Write(o.body[1:])
	_, _ = w.Write([]byte("\n"))
}

// route maps a request to a resource, a namespace and name, and a verb:
//
//	/api/v1/RESOURCE[/NAME[/SUBRESOURCE]]
//	/api/v1/namespaces/NS/RESOURCE[/NAME[/SUBRESOURCE]]
//	/apis/GROUP/VERSION/... likewise
func (s *Server) route(req *http.Request) (route, *apiserve.Error) {
	p, perr := apiserve.ParsePath(req.URL.Path)
	if perr != nil {
		return route{}, perr
	}
	group, version, name := p.Group, p.Version, p.Resource
	rt := route{namespace: p.Namespace, name: p.Name, sub: p.Subresource}
	addr := httpwatch.Resource{Group: group, Version: version, Resource: name}
	s.mu.Lock()
	st := s.stores[id(addr)]
	if d, ok := catalogued(addr); st == nil && ok {
		// A built-in resource no test registered is there, empty.
		st = s.storeLocked(resource{Group: group, Version: version, Resource: name, Definition: d})
	}
	if s.withheld[id(addr)] {
		st = nil
	}
	s.mu.Unlock()
	if st == nil || rt.namespace != "" && !st.res.Namespaced || rt.name != "" && st.res.Namespaced && rt.namespace == "" ||
		rt.sub != "" && !st.res.has(rt.sub) {
		return route{}, apiserve.UnknownResource()
	}
	rt.st = st
	var watch bool
	rt.opts, watch, rt.optsErr = httpwatch.ParseListOptions(req.URL.Query())
	switch {
	case rt.sub != "" && req.Method == http.MethodGet:
		rt.verb = "get"
	case rt.sub != "" && req.Method == http.MethodPut:
		rt.verb = "update"
	case rt.sub != "" && req.Method == http.MethodPatch:
		rt.verb = "patch"
	case rt.sub != "":
		return rt, apiserve.MethodNotAllowed()
	case req.Method == http.MethodGet && watch:
		rt.verb = "watch"
	case req.Method == http.MethodGet && rt.name == "":
		rt.verb = "list"
	case req.Method == http.MethodGet:
		rt.verb = "get"
	case req.Method == http.MethodPost && rt.name == "" && (rt.namespace != "" || !st.res.Namespaced):
		rt.verb = "create"
	case req.Method == http.MethodPut && rt.name != "":
		rt.verb = "update"
	case req.Method == http.MethodPatch && rt.name != "":
		rt.verb = "patch"
	case req.Method == http.MethodDelete && rt.name != "":
		rt.verb = "delete"
	case req.Method == http.MethodDelete && (rt.namespace != "" || !st.res.Namespaced):
		rt.verb = "deletecollection"
	default:
		return rt, apiserve.MethodNotAllowed()
	}
	return rt, nil
}

// serveCollection parses and checks the parameters of a list or watch and
// hands it on.
func (s *Server) serveCollection(w http.ResponseWriter, req *http.Request, rt route) {
	if rt.optsErr != nil {
		badRequest("%v", rt.optsErr).Write(w)
		return
	}
	o := rt.opts
	sc := scope{namespace: rt.namespace, name: rt.name}
	var ferr *apiserve.Error
	if sc.filter, ferr = apiserve.ParseFilter(rt.st.res.core(), o.LabelSelector, o.FieldSelector); ferr != nil {
		ferr.Write(w)
		return
	}
	rv := o.ResourceVersion
	var startRV int64
	if rv != "" {
		n, err := strconv.ParseUint(rv, 10, 63)
		if err != nil {
			// The real server's words, its parser's error included; a
			// watch's reaches the client as a 500 without a reason.
			msg := fmt.Sprintf("resourceVersion: Invalid value: %q: %v", rv, err)
			if rt.verb == "watch" {
				(&apiserve.Error{Code: http.StatusInternalServerError, Message: msg}).Write(w)
			} else {
				badRequest("invalid resource version: %s", msg).Write(w)
			}
			return
		}
		startRV = int64(n)
	}
	var initial *bool
	if _, ok := req.URL.Query()["sendInitialEvents"]; ok {
		initial = &o.SendInitialEvents
	}
	match, cont := o.ResourceVersionMatch, o.Continue
	if rt.verb == "list" {
		if e := apiserve.CheckListOptions(rv, match, cont, initial); e != nil {
			e.Write(w)
			return
		}
		s.serveList(w, req, rt.st, sc, apiserve.ListQuery{ResourceVersion: rv, StartRV: startRV, Match: match, Continue: cont, Limit: int(max(o.Limit, 0))}, rt.table)
		return
	}
	s.mu.Lock()
	refuse := s.faults.refuseWatchList
	s.mu.Unlock()
	if e := apiserve.CheckWatchOptions(match, cont, initial, refuse); e != nil {
		e.Write(w)
		return
	}
	s.serveWatch(w, req, rt.st, sc, apiserve.WatchQuery{ResourceVersion: rv, StartRV: startRV, SendInitialEvents: initial,
		AllowBookmarks: o.AllowWatchBookmarks, Timeout: time.Duration(max(o.TimeoutSeconds, 0)) * time.Second}, rt.table)
}

// mediaType is a Content-Type without its parameters.
func mediaType(ct string) string {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return ct
	}
	return mt
}

// unknownGroup reports whether path is under /apis/GROUP/ for a group no
// served resource belongs to.
func (s *Server) unknownGroup(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if len(parts) < 2 || parts[0] != "apis" {
		return false
	}
	for _, r := range s.apiResources() {
		if r.Group == parts[1] {
			return false
		}
	}
	return true
}
