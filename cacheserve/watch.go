package cacheserve

import (
	"context"
	"net/http"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

// view is a served Cache narrowed to what one request selects: the
// apiserve.History its list or watch is served from (decision 44).
type view struct {
	s  *Server
	c  *Cache
	sc scope
}

func (v view) WaitFor(ctx context.Context, rv int64) (int64, bool) { return v.s.waitFor(ctx, v.c, rv) }

func (v view) Read(f func(apiserve.View)) {
	v.c.mu.RLock()
	defer v.c.mu.RUnlock()
	f(v)
}

// The apiserve.View: c.mu is held for reading.

func (v view) ResourceVersion() int64 { return v.c.rv }

func (v view) Floor() int64 { return v.c.log.Floor() }

func (v view) List(rv int64, start string, limit int) ([]apiserve.Item, bool, int64) {
	return page(v.c.snapshotAtLocked(rv), v.sc, start, limit)
}

func (v view) Now() (int64, uint64, <-chan struct{}) {
	v.c.mu.RLock()
	defer v.c.mu.RUnlock()
	return v.c.rv, v.c.log.Epoch(), v.c.moved
}

func (v view) Since(buf []apiserve.Event[*raw.Object], after int64, epoch uint64, max int) ([]apiserve.Event[*raw.Object], error) {
	v.c.mu.RLock()
	defer v.c.mu.RUnlock()
	return v.c.log.Since(buf, after, epoch, max)
}

func (v view) Match(o *raw.Object) bool { return v.sc.matches(o) }

func (v view) Body(o *raw.Object) []byte { return o.Raw() }

// serveWatch checks a watch's parameters and has the serving core stream
// it from the cache (decision 44); before the first sync it is a 429.
func (s *Server) serveWatch(w http.ResponseWriter, req *http.Request, rt route, o httpwatch.ListOptions) {
	sc, e := parseScope(rt, o)
	if e != nil {
		e.Write(w)
		return
	}
	var initial *bool
	if _, ok := req.URL.Query()["sendInitialEvents"]; ok {
		initial = &o.SendInitialEvents
	}
	if e := apiserve.CheckWatchOptions(o.ResourceVersionMatch, o.Continue, initial, false); e != nil {
		e.Write(w)
		return
	}
	startRV, e := parseVersion(o.ResourceVersion, true)
	if e != nil {
		e.Write(w)
		return
	}
	if _, synced := rt.sv.cache.ResourceVersion(); !synced {
		notReady().Write(w)
		return
	}
	q := apiserve.WatchQuery{ResourceVersion: o.ResourceVersion, StartRV: startRV, SendInitialEvents: initial,
		AllowBookmarks: o.AllowWatchBookmarks, Timeout: time.Duration(o.TimeoutSeconds) * time.Second}
	apiserve.ServeWatch(req.Context(), w, view{s, rt.sv.cache, sc}, q, apiserve.WatchStream{
		Layout: layout(rt.sv.res), Table: rt.tableOutput(), Clock: s.clock(), BookmarkEvery: s.bookmarkEvery()})
}

// tableOutput is how the request asks for a Table, nil for plain JSON.
func (rt route) tableOutput() *apiserve.TableOutput {
	if rt.table == nil {
		return nil
	}
	return &apiserve.TableOutput{Printer: apiserve.PrinterFor(rt.sv.res.Group, rt.sv.res.Resource), Request: *rt.table}
}

func layout(r apiserve.APIResource) apiserve.Layout {
	return apiserve.Layout{Kind: r.Kind, APIVersion: apiVersion(r), Custom: r.Custom}
}
