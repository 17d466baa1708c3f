package cacheserve

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/selector"
)

// scope is what a list or watch selects: a namespace, a name, selectors.
type scope struct {
	namespace string
	name      string
	filter    apiserve.Filter
}

// objFields reads an object's fields for a field selector.
type objFields struct{ o *raw.Object }

func (f objFields) Get(path string) (string, bool) {
	switch path {
	case "metadata.name":
		return f.o.Name(), true
	case "metadata.namespace":
		return f.o.Namespace(), true
	}
	r := f.o.Get(path)
	if !r.Exists() {
		return "", false
	}
	return r.String(), true
}

func (sc scope) matches(o *raw.Object) bool {
	if sc.namespace != "" && o.Namespace() != sc.namespace || sc.name != "" && o.Name() != sc.name {
		return false
	}
	if sc.filter.Empty() {
		return true
	}
	return sc.filter.Matches(selector.Set(o.Labels()), objFields{o})
}

// parseScope reads and checks a request's selectors, and that the cache
// holds everything they select.
func parseScope(rt route, o httpwatch.ListOptions) (scope, *apiserve.Error) {
	sc := scope{namespace: rt.namespace, name: rt.name}
	var e *apiserve.Error
	if sc.filter, e = apiserve.ParseFilter(rt.sv.res, o.LabelSelector, o.FieldSelector); e != nil {
		return sc, e
	}
	return sc, rt.sv.covers(sc.filter.Labels, sc.filter.Fields)
}

// parseVersion reads a resourceVersion parameter: 0 for "" and "0".
func parseVersion(rv string, watch bool) (int64, *apiserve.Error) {
	if rv == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(rv, 10, 63)
	if err != nil {
		msg := fmt.Sprintf("resourceVersion: Invalid value: %q: %v", rv, err)
		if watch { // the real server's 500 without a reason
			return 0, &apiserve.Error{Code: http.StatusInternalServerError, Message: msg}
		}
		return 0, badRequest("invalid resource version: %s", msg)
	}
	return int64(n), nil
}

// waitFor waits, up to TooLargeWait, for the cache to reach rv; it
// returns the version reached and whether that is rv or later.
func (s *Server) waitFor(ctx context.Context, c *Cache, rv int64) (int64, bool) {
	var t clock.Timer
	for {
		c.mu.RLock()
		cur, moved := c.rv, c.moved
		c.mu.RUnlock()
		if cur >= rv {
			return cur, true
		}
		if t == nil {
			t = s.clock().NewTimer(s.tooLargeWait())
			defer t.Stop()
		}
		select {
		case <-moved:
		case <-t.C():
			return cur, false
		case <-ctx.Done():
			return cur, false
		}
	}
}

func (s *Server) serveGet(w http.ResponseWriter, rt route) {
	o, _, synced := rt.sv.cache.get(rt.namespace, rt.name)
	switch {
	case !synced:
		notReady().Write(w)
		return
	case o == nil && rt.sv.selective():
		// Upstream may have it: the informer holds only what its
		// selectors select.
		rt.sv.covers(selector.Everything(), selector.FieldSelector{}).Write(w)
		return
	case o == nil:
		notFound(rt.sv.res, rt.name).Write(w)
		return
	}
	obj := apiserve.Whole(layout(rt.sv.res).Prefix(), o.Raw())
	if t := rt.tableOutput(); t != nil {
		t.Write(w, [][]byte{obj}, apiserve.ListMeta{ResourceVersion: o.ResourceVersion()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(obj)
	_, _ = w.Write([]byte("\n"))
}

func notFound(r apiserve.APIResource, name string) *apiserve.Error {
	gr := r.Resource
	if r.Group != "" {
		gr += "." + r.Group
	}
	return &apiserve.Error{Code: http.StatusNotFound, Reason: "NotFound", Message: fmt.Sprintf("%s %q not found", gr, name),
		Details: &apiserve.StatusDetails{Name: name, Group: r.Group, Kind: r.Resource}}
}

func apiVersion(r apiserve.APIResource) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// serveList checks a list's parameters and has the serving core answer
// it from the cache's snapshots (apiserve.ServeList); before the first
// sync it is a 429, never an empty list.
func (s *Server) serveList(w http.ResponseWriter, req *http.Request, rt route, o httpwatch.ListOptions) {
	sc, e := parseScope(rt, o)
	if e != nil {
		e.Write(w)
		return
	}
	var initial *bool
	if _, ok := req.URL.Query()["sendInitialEvents"]; ok {
		initial = &o.SendInitialEvents
	}
	if e := apiserve.CheckListOptions(o.ResourceVersion, o.ResourceVersionMatch, o.Continue, initial); e != nil {
		e.Write(w)
		return
	}
	startRV, e := parseVersion(o.ResourceVersion, false)
	if e != nil {
		e.Write(w)
		return
	}
	if _, synced := rt.sv.cache.ResourceVersion(); !synced {
		notReady().Write(w)
		return
	}
	q := apiserve.ListQuery{ResourceVersion: o.ResourceVersion, StartRV: startRV, Match: o.ResourceVersionMatch,
		Continue: o.Continue, Limit: int(max(o.Limit, 0))}
	apiserve.ServeList(req.Context(), w, view{s, rt.sv.cache, sc}, q, layout(rt.sv.res), rt.tableOutput())
}

// page picks the items of one page from snap, after the key start,
// whether more follow and, like the real server only without selectors,
// how many.
func page(snap *snapshot, sc scope, start string, limit int) (items []apiserve.Item, more bool, remaining int64) {
	i := snap.from(start)
	if sc.namespace != "" {
		i = max(i, snap.from(sc.namespace+"/"))
	}
	// A namespace's objects are the keys from "namespace/" on that start
	// with it: namespaces and names hold no '/', so those of the namespace.
	in := func(o *raw.Object) bool { return sc.namespace == "" || o.Namespace() == sc.namespace }
	count := sc.filter.Empty() && sc.name == ""
	for ; i < len(snap.objs); i++ {
		o := snap.objs[i]
		if !in(o) {
			break
		}
		if !sc.matches(o) {
			continue
		}
		if limit > 0 && len(items) == limit {
			if !count {
				return items, true, 0
			}
			for ; i < len(snap.objs) && in(snap.objs[i]); i++ {
				remaining++
			}
			return items, true, remaining
		}
		// The key is built, the cache keeps none (Cache.objs): one small
		// allocation an item, in the time of writing its body.
		items = append(items, apiserve.Item{Key: key(o), Body: o.Raw()})
	}
	return items, false, 0
}
