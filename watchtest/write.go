package watchtest

import (
	"encoding/json"
	"io"
	"net/http"

	"github.com/listwatch/listwatch/apiserve"
)

// serveWrite answers create, update, patch, delete and deletecollection.
func (s *Server) serveWrite(w http.ResponseWriter, req *http.Request, rt route) {
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody))
	if err != nil {
		badRequest("reading the request body: %v", err).Write(w)
		return
	}
	switch rt.verb {
	case "patch":
		s.servePatch(w, req, rt, body)
	case "delete":
		s.serveDelete(w, req, rt, body)
	case "deletecollection":
		s.serveDeleteCollection(w, req, rt, body)
	default:
		s.serveCreateOrUpdate(w, req, rt, body)
	}
}

func (s *Server) serveCreateOrUpdate(w http.ResponseWriter, req *http.Request, rt route, body []byte) {
	r := rt.st.res
	kind, code := "UpdateOptions", http.StatusOK
	if rt.verb == "create" {
		kind, code = "CreateOptions", http.StatusCreated
	}
	opts, aerr := parseWriteOptions(req, kind)
	if aerr == nil && opts.strict && json.Valid(body) {
		aerr = checkStrict(r, body)
	}
	if aerr != nil {
		aerr.Write(w)
		return
	}
	opts.subresource = rt.sub
	var o *object
	var err error
	switch {
	case rt.verb == "create":
		o, err = s.create(r, rt.namespace, json.RawMessage(body), opts)
	case rt.sub == "scale":
		o, err = s.updateScale(r, rt.namespace, rt.name, body, opts)
	default:
		o, err = s.update(r, rt.namespace, rt.name, json.RawMessage(body), opts)
	}
	if err != nil {
		apiserve.AsError(err).Write(w)
		return
	}
	if rt.sub == "scale" {
		writeScale(w, code, r, o)
		return
	}
	writeObject(w, code, rt.st, o)
}

func (s *Server) updateScale(r resource, ns, name string, body []byte, opts writeOptions) (*object, error) {
	sc, err := decodeJSON(body)
	if err != nil {
		return nil, badRequest("the Scale is not valid JSON: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.storeLocked(r)
	old, err := st.existing(ns, name)
	if err != nil {
		return nil, err
	}
	return s.setScaleLocked(st, old, sc, opts)
}

func (s *Server) serveDelete(w http.ResponseWriter, req *http.Request, rt route, body []byte) {
	opts, aerr := parseDeleteOptions(req, body)
	if aerr != nil {
		aerr.Write(w)
		return
	}
	o, gone, err := s.delete(rt.st.res, rt.namespace, rt.name, opts)
	switch {
	case err != nil:
		apiserve.AsError(err).Write(w)
	case gone:
		writeDeleted(w, rt.st, o)
	default:
		writeObject(w, http.StatusOK, rt.st, o)
	}
}

func (s *Server) serveDeleteCollection(w http.ResponseWriter, req *http.Request, rt route, body []byte) {
	opts, aerr := parseDeleteOptions(req, body)
	if aerr != nil {
		aerr.Write(w)
		return
	}
	if rt.optsErr != nil {
		badRequest("%v", rt.optsErr).Write(w)
		return
	}
	f, ferr := apiserve.ParseFilter(rt.st.res.core(), rt.opts.LabelSelector, rt.opts.FieldSelector)
	if ferr != nil {
		ferr.Write(w)
		return
	}
	objs, rv, err := s.deleteCollection(rt.st.res, rt.namespace, f, opts)
	if err != nil {
		apiserve.AsError(err).Write(w)
		return
	}
	apiserve.WriteList(w, rt.st.res.layout(), items(objs), rv, "", 0)
}
