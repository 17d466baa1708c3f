package cacheserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

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
	k := rt.name
	if rt.namespace != "" {
		k = rt.namespace + "/" + rt.name
	}
	o, _, synced := rt.sv.cache.get(k)
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
	w.Header().Set("Content-Type", "application/json")
	if rt.table != nil {
		p := printer(rt.sv.res)
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(apiserve.AppendTable(nil, p, [][]byte{whole(rt.sv.res, o)}, apiserve.ListMeta{ResourceVersion: o.ResourceVersion()}, *rt.table), '\n'))
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(whole(rt.sv.res, o))
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

func printer(r apiserve.APIResource) apiserve.Printer {
	return apiserve.PrinterFor(r.Group, r.Resource)
}

func apiVersion(r apiserve.APIResource) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// hasKind reports whether an object's JSON starts with its kind or
// apiVersion, as objects from a watch or a custom resource's list do;
// a built-in list's items have neither.
func hasKind(b []byte) bool {
	return bytes.HasPrefix(b, []byte(`{"kind":`)) || bytes.HasPrefix(b, []byte(`{"apiVersion":`))
}

// whole is o as a client reads it alone, with its kind and apiVersion:
// the bytes the cache holds, with those two put in front if they lack
// them, never re-encoded.
func whole(r apiserve.APIResource, o *raw.Object) []byte {
	b := o.Raw()
	if hasKind(b) || o.Kind() != "" {
		return b
	}
	return appendWhole(nil, r, b)
}

func appendWhole(dst []byte, r apiserve.APIResource, b []byte) []byte {
	if hasKind(b) {
		return append(dst, b...)
	}
	dst = append(dst, `{"kind":`...)
	dst = strconv.AppendQuote(dst, r.Kind)
	dst = append(dst, `,"apiVersion":`...)
	dst = strconv.AppendQuote(dst, apiVersion(r))
	if len(b) > 2 {
		dst = append(dst, ',')
	}
	return append(dst, b[1:]...)
}

// serveList answers a list from the snapshot its resourceVersion
// semantics pick: "" and "0" the version reached ("0" ignores limit, as
// the watch cache does), N with Exact the state at N while the history
// holds it, N with NotOlderThan the version reached once it is N or
// later. Pages share their snapshot.
func (s *Server) serveList(w http.ResponseWriter, req *http.Request, rt route, o httpwatch.ListOptions) {
	sc, e := parseScope(rt, o)
	if e != nil {
		e.Write(w)
		return
	}
	rv, match, cont := o.ResourceVersion, o.ResourceVersionMatch, o.Continue
	var initial *bool
	if _, ok := req.URL.Query()["sendInitialEvents"]; ok {
		initial = &o.SendInitialEvents
	}
	if e := apiserve.CheckListOptions(rv, match, cont, initial); e != nil {
		e.Write(w)
		return
	}
	startRV, e := parseVersion(rv, false)
	if e != nil {
		e.Write(w)
		return
	}
	c := rt.sv.cache
	cur, synced := c.ResourceVersion()
	if !synced {
		notReady().Write(w)
		return
	}
	limit := int(max(o.Limit, 0))
	snapRV, start := cur, ""
	switch {
	case cont != "":
		if rv != "" {
			badRequest("specifying resource version is not allowed when using continue").Write(w)
			return
		}
		tok, err := apiserve.DecodeContinue(cont)
		if err != nil {
			badRequest("invalid continue token: continue key is not valid: %v", err).Write(w)
			return
		}
		start = tok.Start
		if tok.RV > cur {
			badRequest("continue key is not valid: resourceVersion %d is in the future", tok.RV).Write(w)
			return
		}
		if tok.RV != -1 {
			snapRV = tok.RV
		}
	case rv == "0":
		limit = 0
	case startRV == 0:
	default:
		got, ok := s.waitFor(req.Context(), c, startRV)
		if !ok {
			apiserve.TooLarge(startRV, got).Write(w)
			return
		}
		snapRV = got
		if match == "Exact" || match == "" && limit > 0 {
			snapRV = startRV
		}
	}
	snap := c.snapshot(snapRV)
	if snap == nil {
		if cont != "" {
			apiserve.ExpiredContinue(apiserve.EncodeContinue(-1, start)).Write(w)
			return
		}
		apiserve.Expired("list").Write(w)
		return
	}
	items, next, remaining := page(snap, sc, start, limit)
	if rt.table != nil {
		objs := make([][]byte, len(items))
		for i, o := range items {
			objs[i] = whole(rt.sv.res, o)
		}
		m := apiserve.ListMeta{ResourceVersion: strconv.FormatInt(snap.rv, 10), Continue: next}
		if remaining > 0 {
			m.RemainingItemCount = &remaining
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(append(apiserve.AppendTable(nil, printer(rt.sv.res), objs, m, *rt.table), '\n'))
		return
	}
	writeList(w, rt.sv.res, items, snap.rv, next, remaining)
}

// page picks the items of one page from snap, after the key start, and
// the continue token and remainingItemCount for the rest. Like the real
// server, remainingItemCount is given only without selectors.
func page(snap *snapshot, sc scope, start string, limit int) (items []*raw.Object, next string, remaining int64) {
	i := snap.from(start)
	last := ""
	if sc.namespace != "" {
		i = max(i, snap.from(sc.namespace+"/"))
	}
	for ; i < len(snap.keys); i++ {
		k := snap.keys[i]
		if sc.namespace != "" && !strings.HasPrefix(k, sc.namespace+"/") {
			break
		}
		o := snap.objs[i]
		if !sc.matches(o) {
			continue
		}
		if limit > 0 && len(items) == limit {
			next = apiserve.EncodeContinue(snap.rv, last+"\x00")
			if sc.filter.Empty() && sc.name == "" {
				for ; i < len(snap.keys) && (sc.namespace == "" || strings.HasPrefix(snap.keys[i], sc.namespace+"/")); i++ {
					remaining++
				}
			}
			return items, next, remaining
		}
		items = append(items, o)
		last = k
	}
	return items, "", 0
}

// writeList writes a list as the real server lays it out: a built-in's
// kind, apiVersion, metadata, items; a custom resource's keys sorted.
// Items are the bytes the cache holds.
func writeList(w http.ResponseWriter, r apiserve.APIResource, items []*raw.Object, rv int64, next string, remaining int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	kind, _ := json.Marshal(r.Kind + "List")
	av, _ := json.Marshal(apiVersion(r))
	meta := func(b []byte) []byte {
		if r.Custom {
			b = append(b, `{"continue":"`+next+`"`...)
			if remaining > 0 {
				b = append(b, `,"remainingItemCount":`+strconv.FormatInt(remaining, 10)...)
			}
			return append(b, `,"resourceVersion":"`+strconv.FormatInt(rv, 10)+`"}`...)
		}
		b = append(b, `{"resourceVersion":"`+strconv.FormatInt(rv, 10)+`"`...)
		if next != "" {
			b = append(b, `,"continue":"`+next+`"`...)
			if remaining > 0 {
				b = append(b, `,"remainingItemCount":`+strconv.FormatInt(remaining, 10)...)
			}
		}
		return append(b, '}')
	}
	if r.Custom {
		_, _ = bw.WriteString(`{"apiVersion":` + string(av) + `,"items":[`)
	} else {
		_, _ = bw.WriteString(`{"kind":` + string(kind) + `,"apiVersion":` + string(av) + `,"metadata":` + string(meta(nil)) + `,"items":[`)
	}
	for i, o := range items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.Write(o.Raw())
	}
	if r.Custom {
		_, _ = bw.WriteString(`],"kind":` + string(kind) + `,"metadata":` + string(meta(nil)) + "}\n")
	} else {
		_, _ = bw.WriteString("]}\n")
	}
	_ = bw.Flush()
}
