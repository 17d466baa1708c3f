package cacheserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/tidwall/gjson"
)

// batch is how many events a watch takes from the history per lock.
const batch = 256

// tooOld is the 410 kube-apiserver's watch cache sends, as an ERROR event,
// for a watch from a version its history no longer holds (or a watcher
// that fell behind it): the version asked for and the oldest it has.
func tooOld(rv, floor int64) *apiserve.Error {
	return &apiserve.Error{Code: http.StatusGone, Reason: "Expired", Message: fmt.Sprintf("too old resource version: %d (%d)", rv, floor)}
}

// serveWatch streams a watch: what it replays first (the state as ADDED
// events, or the history after its version), then each change as the
// cache records it, with bookmarks if allowed, until its timeout, the
// client's leaving, or a reset of the cache (a 410 ERROR event).
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
	c := rt.sv.cache
	if _, synced := c.ResourceVersion(); !synced {
		notReady().Write(w)
		return
	}
	ctx := req.Context()
	ws := &watchStream{w: w, rc: http.NewResponseController(w), res: rt.sv.res, sc: sc, table: rt.table}
	if rt.table != nil {
		ws.printer = printer(rt.sv.res)
	}
	// The headers go at once, as the real server sends them, so a client
	// knows its watch is established; what cannot be served from here on
	// is an ERROR event.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if !ws.flush() {
		return
	}
	var failure *apiserve.Error
	if startRV > 0 {
		if cur, ok := s.waitFor(ctx, c, startRV); !ok {
			failure = apiserve.TooLarge(startRV, cur)
		}
	}
	sendInitial := initial != nil && *initial || initial == nil && startRV == 0
	c.mu.RLock()
	epoch, pos, floor := c.epoch, c.rv, c.floor
	c.mu.RUnlock()
	switch {
	case failure != nil:
	case sendInitial:
		// The state at pos as ADDED events, then the history after pos.
	case startRV == 0: // sendInitialEvents=false: only what comes next
	case startRV < floor:
		failure = tooOld(startRV, floor)
	default:
		pos = startRV
	}
	if failure != nil {
		ws.error(failure)
		return
	}
	if sendInitial {
		snap := c.snapshot(pos)
		if snap == nil { // the history moved past pos meanwhile
			ws.error(tooOld(pos, floor))
			return
		}
		for i, obj := range snap.objs {
			if sc.matches(obj) {
				ws.frame(added, obj, 0)
			}
			if i%batch == batch-1 && !ws.flush() {
				return
			}
		}
		if o.AllowWatchBookmarks && (initial != nil || o.ResourceVersion == "0") {
			ws.bookmark(pos, true)
		}
	}
	if !ws.flush() {
		return
	}

	clk := s.clock()
	var bookmarks, timeout <-chan time.Time
	var bt clock.Timer
	if o.AllowWatchBookmarks {
		bt = clk.NewTimer(s.bookmarkEvery())
		defer bt.Stop()
		bookmarks = bt.C()
	}
	if o.TimeoutSeconds > 0 {
		t := clk.NewTimer(time.Duration(o.TimeoutSeconds) * time.Second)
		defer t.Stop()
		timeout = t.C()
	}
	var evs []event
	for {
		c.mu.RLock()
		if c.epoch != epoch || pos < c.floor {
			// A relist upstream the history cannot bridge, or a watcher
			// so slow the history dropped what it had yet to send.
			fl := c.floor
			c.mu.RUnlock()
			ws.error(tooOld(pos, fl))
			return
		}
		i := sort.Search(len(c.events), func(i int) bool { return c.events[i].rv > pos })
		evs = append(evs[:0], c.events[i:min(len(c.events), i+batch)]...)
		cur, moved := c.rv, c.moved
		caughtUp := i+len(evs) == len(c.events)
		c.mu.RUnlock()
		for _, ev := range evs {
			ws.event(ev)
			pos = ev.rv
		}
		if caughtUp {
			pos = max(pos, cur) // bookmarks carry the version reached
		}
		if !ws.flush() {
			return
		}
		if !caughtUp {
			continue
		}
		select {
		case <-moved:
		case <-bookmarks:
			ws.bookmark(pos, false)
			bt.Reset(s.bookmarkEvery())
		case <-timeout:
			if o.AllowWatchBookmarks {
				ws.bookmark(pos, false)
				ws.flush()
			}
			return
		case <-ctx.Done():
			return
		}
	}
}

// watchStream writes the frames of one watch response.
type watchStream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	res apiserve.APIResource
	sc  scope
	buf []byte
	err bool
	// table, when set, sends each object as a one-row Table, the column
	// definitions in the first only, as the real server does for kubectl
	// get --watch.
	table   *apiserve.TableRequest
	printer apiserve.Printer
}

// event writes what ev is to this watch's selection: an object entering
// it is ADDED, one leaving it DELETED (its last state there, at the
// event's version), as kube-apiserver's watch cache sends them.
func (ws *watchStream) event(ev event) {
	was := ev.prev != nil && ws.sc.matches(ev.prev)
	switch ev.typ {
	case added:
		if ws.sc.matches(ev.obj) {
			ws.frame(added, ev.obj, 0)
		}
	case deleted:
		if was || ev.prev == nil && ws.sc.matches(ev.obj) {
			ws.frame(deleted, ev.obj, 0)
		}
	case modified:
		is := ws.sc.matches(ev.obj)
		switch {
		case was && is:
			ws.frame(modified, ev.obj, 0)
		case is:
			ws.frame(added, ev.obj, 0)
		case was:
			ws.frame(deleted, ev.prev, ev.rv)
		}
	}
}

// frame appends one event; rv, if not 0, replaces the object's
// resourceVersion (a DELETED for an object leaving the selection).
func (ws *watchStream) frame(typ string, o *raw.Object, rv int64) {
	b := append(ws.buf, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","object":`...)
	obj := o.Raw()
	if rv != 0 {
		obj = withVersion(obj, o.Get("metadata.resourceVersion"), rv)
	}
	if ws.table != nil {
		b = apiserve.AppendTable(b, ws.printer, [][]byte{appendWhole(nil, ws.res, obj)}, apiserve.ListMeta{ResourceVersion: gjson.GetBytes(obj, "metadata.resourceVersion").String()}, *ws.table)
		ws.table.NoHeaders = true
	} else {
		b = appendWhole(b, ws.res, obj)
	}
	ws.buf = append(b, "}\n"...)
}

// withVersion is obj with its resourceVersion (old, read from obj) set
// to rv: a splice, not a re-encoding.
func withVersion(obj []byte, old gjson.Result, rv int64) []byte {
	if old.Index <= 0 {
		return obj
	}
	out := make([]byte, 0, len(obj)+8)
	out = append(out, obj[:old.Index]...)
	out = strconv.AppendQuote(out, strconv.FormatInt(rv, 10))
	return append(out, obj[old.Index+len(old.Raw):]...)
}

// bookmark appends a BOOKMARK at rv; end marks the end of the initial
// events (k8s.io/initial-events-end).
func (ws *watchStream) bookmark(rv int64, end bool) {
	b := append(ws.buf, `{"type":"BOOKMARK","object":{"kind":`...)
	b = strconv.AppendQuote(b, ws.res.Kind)
	b = append(b, `,"apiVersion":`...)
	b = strconv.AppendQuote(b, apiVersion(ws.res))
	b = append(b, `,"metadata":{`...)
	if end {
		b = append(b, `"annotations":{"k8s.io/initial-events-end":"true"},`...)
	}
	b = append(b, `"resourceVersion":"`...)
	b = strconv.AppendInt(b, rv, 10)
	ws.buf = append(b, `"}}}`+"\n"...)
}

// error writes an ERROR event and flushes: the watch ends.
func (ws *watchStream) error(e *apiserve.Error) {
	j, _ := json.Marshal(e.Status()) // a struct of strings and ints
	ws.buf = append(ws.buf, `{"type":"ERROR","object":`...)
	ws.buf = append(append(ws.buf, j...), "}\n"...)
	ws.flush()
}

// flush writes what is buffered; false once the client is gone.
func (ws *watchStream) flush() bool {
	if ws.err {
		return false
	}
	if len(ws.buf) > 0 {
		if _, err := ws.w.Write(ws.buf); err != nil {
			ws.err = true
			return false
		}
		ws.buf = ws.buf[:0]
	}
	if err := ws.rc.Flush(); err != nil {
		ws.err = true
		return false
	}
	return true
}
