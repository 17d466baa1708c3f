package watchtest

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/listwatch/listwatch/apiserve"
)

// listRequest is a parsed list.
type listRequest struct {
	scope   scope
	limit   int
	cont    string
	rv      string // as given
	startRV int64  // rv parsed, 0 for "" and "0"
	match   string // resourceVersionMatch
	table   *tableOut
}

// serveList answers a list from the snapshot its resourceVersion semantics
// pick. Pages of one list share the snapshot, so they are consistent
// however the objects change in between.
func (s *Server) serveList(w http.ResponseWriter, req *http.Request, st *store, lr listRequest) {
	var start string
	exact, notOlder := false, false
	switch {
	case lr.cont != "":
		if lr.rv != "" {
			badRequest("specifying resource version is not allowed when using continue").Write(w)
			return
		}
	case lr.startRV == 0: // "" is the latest, "0" any version: the latest is one
	case lr.match == "Exact", lr.match == "" && lr.limit > 0:
		exact = true
	default:
		notOlder = true
	}
	var tok apiserve.ContinueToken
	if lr.cont != "" {
		var err error
		if tok, err = apiserve.DecodeContinue(lr.cont); err != nil {
			badRequest("invalid continue token: continue key is not valid: %v", err).Write(w)
			return
		}
		start = tok.Start
	}
	if exact || notOlder {
		if cur, ok := s.waitForRV(req.Context(), lr.startRV); !ok {
			apiserve.TooLarge(lr.startRV, cur).Write(w)
			return
		}
	}

	s.mu.Lock()
	snap := s.rv
	switch {
	case lr.cont != "" && tok.RV > s.rv:
		s.mu.Unlock()
		badRequest("continue key is not valid: resourceVersion %d is in the future", tok.RV).Write(w)
		return
	case lr.cont != "" && tok.RV != -1 && tok.RV < s.floorOf(st):
		s.mu.Unlock()
		apiserve.ExpiredContinue(apiserve.EncodeContinue(-1, start)).Write(w)
		return
	case lr.cont != "" && tok.RV != -1:
		snap = tok.RV
	case exact && lr.startRV < s.floorOf(st):
		s.mu.Unlock()
		apiserve.Expired("list").Write(w)
		return
	case exact:
		snap = lr.startRV
	}
	items, more, remaining := st.snapshot(lr.scope, snap, start, lr.limit)
	s.mu.Unlock()

	next := ""
	if more {
		next = apiserve.EncodeContinue(snap, items[len(items)-1].key+"\x00")
	}
	if lr.table != nil {
		objs := make([][]byte, len(items))
		for i, o := range items {
			objs[i] = full(st, o)
		}
		m := apiserve.ListMeta{ResourceVersion: strconv.FormatInt(snap, 10), Continue: next}
		if remaining > 0 {
			m.RemainingItemCount = &remaining
		}
		writeTable(w, lr.table, objs, m)
		return
	}
	writeList(w, st, items, snap, next, remaining)
}

// writeList writes a list response the way the real server lays it out:
// built-in lists start with kind and apiVersion and their items have
// neither; custom resource lists are sorted by key and their items are
// complete objects.
func writeList(w http.ResponseWriter, st *store, items []*object, rv int64, next string, remaining int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	kind, _ := json.Marshal(st.res.Kind + "List")
	av, _ := json.Marshal(st.res.apiVersion())
	meta := []byte(`{"resourceVersion":"` + strconv.FormatInt(rv, 10) + `"`)
	if next != "" {
		meta = append(meta, `,"continue":"`+next+`"`...)
		if remaining > 0 {
			meta = append(meta, `,"remainingItemCount":`+strconv.FormatInt(remaining, 10)...)
		}
	}
	meta = append(meta, '}')
	if !st.res.BuiltIn {
		// Custom resources are served through unstructured maps: keys come
		// out sorted and continue is always there.
		meta = []byte(`{"continue":"` + next + `"`)
		if remaining > 0 {
			meta = append(meta, `,"remainingItemCount":`+strconv.FormatInt(remaining, 10)...)
		}
		meta = append(meta, `,"resourceVersion":"`+strconv.FormatInt(rv, 10)+`"}`...)
		_, _ = bw.WriteString(`{"apiVersion":` + string(av) + `,"items":[`)
		writeItems(bw, st, items, true)
		_, _ = bw.WriteString(`],"kind":` + string(kind) + `,"metadata":` + string(meta) + "}\n")
	} else {
		_, _ = bw.WriteString(`{"kind":` + string(kind) + `,"apiVersion":` + string(av) + `,"metadata":` + string(meta) + `,"items":[`)
		writeItems(bw, st, items, false)
		_, _ = bw.WriteString("]}\n")
	}
	_ = bw.Flush()
}

func writeItems(bw *bufio.Writer, st *store, items []*object, typed bool) {
	for i, o := range items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		if typed {
			_, _ = bw.Write(st.prefix)
			_, _ = bw.Write(o.body[1:])
		} else {
			_, _ = bw.Write(o.body)
		}
	}
}
