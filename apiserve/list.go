package apiserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// Store is what the core serves lists from: a versioned store with a
// history, one resource's objects held as the JSON bytes to send. A test
// server keeps every version since its last compaction; a cache that
// mirrors an upstream keeps what it has seen.
type Store interface {
	// WaitFor waits, as long as the store is willing to, until it has
	// reached resourceVersion rv. It returns the version it has reached
	// and whether that is rv or later.
	WaitFor(ctx context.Context, rv int64) (int64, bool)
	// Read calls f with a view of the store held still.
	Read(f func(View))
}

// View is a Store held still, narrowed to what one request selects.
type View interface {
	// ResourceVersion is the version the store has reached.
	ResourceVersion() int64
	// Floor is the oldest version whose state the store can still list;
	// lists at older versions are 410 Expired.
	Floor() int64
	// List returns, in key order, the selected objects as they were at
	// version rv, from key start on, at most limit of them (0: no limit),
	// whether more follow and, when it knows, how many.
	List(rv int64, start string, limit int) (items []Item, more bool, remaining int64)
}

// Item is one object as a store holds it.
type Item struct {
	Key string // "namespace/name", or "name" for a cluster-scoped object
	// Body is the object's JSON, without kind and apiVersion (as a
	// built-in list's items are) or whole, starting with them (as a
	// watch's objects are): the core writes either as the real server
	// lays it out, without re-encoding it.
	Body []byte
}

// Layout is how a resource's objects are written: a built-in one's list
// items carry no kind and apiVersion, a custom one's carry both first
// and its lists have sorted keys, as the real server writes them.
type Layout struct {
	Kind, APIVersion string
	Custom           bool
}

// Prefix is how an object of the resource starts when written with its
// kind and apiVersion: the body without its "{" follows.
func (l Layout) Prefix() []byte {
	kind, _ := json.Marshal(l.Kind)
	av, _ := json.Marshal(l.APIVersion)
	if l.Custom {
		return []byte(`{"apiVersion":` + string(av) + `,"kind":` + string(kind) + `,`)
	}
	return []byte(`{"kind":` + string(kind) + `,"apiVersion":` + string(av) + `,`)
}

// Whole is body with the kind and apiVersion the prefix p gives it; a
// body that starts with either is whole already.
func Whole(p, body []byte) []byte {
	if isWhole(body) {
		return body
	}
	return append(append(make([]byte, 0, len(p)+len(body)), p...), body[1:]...)
}

// isWhole reports whether an object's JSON starts with its kind or
// apiVersion.
func isWhole(body []byte) bool {
	return bytes.HasPrefix(body, []byte(`{"kind":`)) || bytes.HasPrefix(body, []byte(`{"apiVersion":`))
}

// appendWhole appends body with the prefix p in front unless it is
// whole already.
func appendWhole(b, p, body []byte) []byte {
	if isWhole(body) {
		return append(b, body...)
	}
	return append(append(b, p...), body[1:]...)
}

// ListQuery is a list's parameters, checked by CheckListOptions.
type ListQuery struct {
	ResourceVersion string // as given
	StartRV         int64  // ResourceVersion parsed; 0 for "" and "0"
	Match           string // resourceVersionMatch
	Continue        string
	Limit           int
}

// TableOutput is how to answer as a Table; nil answers plain JSON.
type TableOutput struct {
	Printer Printer
	Request TableRequest
}

// ServeList answers a list as the real server does, from the snapshot
// its resourceVersion semantics pick: "" and "0" the latest ("0"
// ignoring limit, as the watch cache does), N with Exact
// (or a limit) exactly N, else at least N, waiting for the store to get
// there (then 504 too large); a continue token reads the same snapshot
// as the page before it, however the store changed in between (410 with a
// fresh token once the store no longer has it). Objects are written as the
// store holds them, not re-encoded.
func ServeList(ctx context.Context, w http.ResponseWriter, st Store, q ListQuery, l Layout, table *TableOutput) {
	if q.ResourceVersion == "0" {
		q.Limit = 0 // any version: the watch cache answers all of it
	}
	var start string
	exact, notOlder := false, false
	switch {
	case q.Continue != "":
		if q.ResourceVersion != "" {
			badRequest("specifying resource version is not allowed when using continue").Write(w)
			return
		}
	case q.StartRV == 0: // "" is the latest, "0" any version: the latest is one
	case q.Match == "Exact", q.Match == "" && q.Limit > 0:
		exact = true
	default:
		notOlder = true
	}
	var tok ContinueToken
	if q.Continue != "" {
		var err error
		if tok, err = DecodeContinue(q.Continue); err != nil {
			badRequest("invalid continue token: continue key is not valid: %v", err).Write(w)
			return
		}
		start = tok.Start
	}
	if exact || notOlder {
		if cur, ok := st.WaitFor(ctx, q.StartRV); !ok {
			TooLarge(q.StartRV, cur).Write(w)
			return
		}
	}
	var (
		fail      *Error
		snap      int64
		items     []Item
		more      bool
		remaining int64
	)
	st.Read(func(v View) {
		snap = v.ResourceVersion()
		switch {
		case q.Continue != "" && tok.RV > snap:
			fail = badRequest("continue key is not valid: resourceVersion %d is in the future", tok.RV)
			return
		case q.Continue != "" && tok.RV != -1 && tok.RV < v.Floor():
			fail = ExpiredContinue(EncodeContinue(-1, start))
			return
		case q.Continue != "" && tok.RV != -1:
			snap = tok.RV
		case exact && q.StartRV < v.Floor():
			fail = Expired("list")
			return
		case exact:
			snap = q.StartRV
		}
		items, more, remaining = v.List(snap, start, q.Limit)
	})
	if fail != nil {
		fail.Write(w)
		return
	}
	next := ""
	if more {
		next = EncodeContinue(snap, items[len(items)-1].Key+"\x00")
	}
	if table != nil {
		table.writeList(w, l, items, snap, next, remaining)
		return
	}
	WriteList(w, l, items, snap, next, remaining)
}

// writeList answers with a list's items as a Table.
func (t *TableOutput) writeList(w http.ResponseWriter, l Layout, items []Item, rv int64, next string, remaining int64) {
	p := l.Prefix()
	objs := make([][]byte, len(items))
	for i, it := range items {
		objs[i] = Whole(p, it.Body)
	}
	m := ListMeta{ResourceVersion: strconv.FormatInt(rv, 10), Continue: next}
	if remaining > 0 {
		m.RemainingItemCount = &remaining
	}
	t.Write(w, objs, m)
}

// Write answers with objs as a Table.
func (t *TableOutput) Write(w http.ResponseWriter, objs [][]byte, meta ListMeta) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(append(AppendTable(nil, t.Printer, objs, meta, t.Request), '\n'))
}

// WriteList writes a list the way the real server lays it out: a
// built-in list starts with kind and apiVersion and its items have
// neither; a custom resource's list has its keys sorted and complete
// items.
func WriteList(w http.ResponseWriter, l Layout, items []Item, rv int64, next string, remaining int64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	kind, _ := json.Marshal(l.Kind + "List")
	av, _ := json.Marshal(l.APIVersion)
	version := strconv.FormatInt(rv, 10)
	count := ""
	if remaining > 0 {
		count = `,"remainingItemCount":` + strconv.FormatInt(remaining, 10)
	}
	if l.Custom {
		// Custom resources are served through unstructured maps: keys come
		// out sorted and continue is always there.
		meta := `{"continue":"` + next + `"` + count + `,"resourceVersion":"` + version + `"}`
		_, _ = bw.WriteString(`{"apiVersion":` + string(av) + `,"items":[`)
		p := l.Prefix()
		for i, it := range items {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			if isWhole(it.Body) {
				_, _ = bw.Write(it.Body)
				continue
			}
			_, _ = bw.Write(p)
			_, _ = bw.Write(it.Body[1:])
		}
		_, _ = bw.WriteString(`],"kind":` + string(kind) + `,"metadata":` + meta + "}\n")
	} else {
		meta := `{"resourceVersion":"` + version + `"`
		if next != "" {
			meta += `,"continue":"` + next + `"` + count
		}
		_, _ = bw.WriteString(`{"kind":` + string(kind) + `,"apiVersion":` + string(av) + `,"metadata":` + meta + `},"items":[`)
		p := l.Prefix()
		for i, it := range items {
			if i > 0 {
				_ = bw.WriteByte(',')
			}
			if bytes.HasPrefix(it.Body, p) {
				// A whole object, as a watch delivered it: a built-in
				// list's items carry no kind and apiVersion.
				_ = bw.WriteByte('{')
				_, _ = bw.Write(it.Body[len(p):])
				continue
			}
			_, _ = bw.Write(it.Body)
		}
		_, _ = bw.WriteString("]}\n")
	}
	_ = bw.Flush()
}
