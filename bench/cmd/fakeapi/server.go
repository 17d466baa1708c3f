package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

// server answers LIST and WATCH of pods from pre-rendered JSON. Its state
// never changes: the list is always at listRV, and every watch that started
// at or before listRV gets the same burst of MODIFIED events, so each client
// in a benchmark run sees exactly the same bytes.
type server struct {
	pods   []pod
	byNS   map[string][]int // indices into pods, per namespace
	all    []int
	listRV uint64
	burst  int // MODIFIED events per watch
	// waitTrigger holds each watch's burst until POST /bench/burst, so the
	// client's sync and its event processing are timed apart.
	waitTrigger bool

	mu      sync.Mutex
	release chan struct{} // closed by the next trigger
	opened  chan struct{} // closed when the next watch starts waiting
	waiting int           // watches waiting for the trigger

	lists, watches, initialEvents atomic.Int64
	bytes, managedFields          int // over all pods at their list versions
}

func newServer(pods []pod, burst int, waitTrigger bool) *server {
	s := &server{
		pods: pods, byNS: map[string][]int{}, burst: burst, waitTrigger: waitTrigger,
		listRV:  uint64(100 + len(pods)),
		release: make(chan struct{}), opened: make(chan struct{}),
	}
	s.all = make([]int, len(pods))
	for i := range pods {
		s.all[i] = i
		s.byNS[pods[i].namespace] = append(s.byNS[pods[i].namespace], i)
		s.bytes += pods[i].size(podRV(i))
		s.managedFields += pods[i].managedFields
	}
	return s
}

// podRV is the resourceVersion pod i has in the list.
func podRV(i int) string { return strconv.Itoa(100 + i) }

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/pods", func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, s.all) })
	mux.HandleFunc("GET /api/v1/namespaces/{ns}/pods", func(w http.ResponseWriter, r *http.Request) {
		s.serve(w, r, s.byNS[r.PathValue("ns")])
	})
	mux.HandleFunc("POST /bench/burst", s.trigger)
	mux.HandleFunc("GET /bench/info", s.info)
	return mux
}

func (s *server) serve(w http.ResponseWriter, r *http.Request, sel []int) {
	opts, watch, err := httpwatch.ParseListOptions(r.URL.Query())
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	if watch {
		s.watches.Add(1)
		s.watch(w, r, sel, opts)
		return
	}
	s.lists.Add(1)
	s.list(w, r, sel, opts)
}

// status writes a metav1.Status error as the API server does.
func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	b, _ := json.Marshal(map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": reason, "code": code,
	})
	_, _ = w.Write(b)
}

// parseRV reads a resourceVersion parameter; "" and "0" mean "any".
func parseRV(v string) (uint64, error) {
	if v == "" || v == "0" {
		return 0, nil
	}
	return strconv.ParseUint(v, 10, 64)
}

func (s *server) list(w http.ResponseWriter, r *http.Request, sel []int, opts httpwatch.ListOptions) {
	rv, err := parseRV(opts.ResourceVersion)
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", "invalid resourceVersion: "+err.Error())
		return
	}
	if rv > s.listRV {
		status(w, http.StatusGatewayTimeout, "Timeout", "Too large resource version")
		return
	}
	if opts.Limit < 0 {
		status(w, http.StatusBadRequest, "BadRequest", "invalid limit")
		return
	}
	limit := int(opts.Limit)
	start := 0
	if c := opts.Continue; c != "" {
		if start, err = s.decodeContinue(c); err != nil || start > len(sel) {
			status(w, http.StatusBadRequest, "BadRequest", "invalid continue token")
			return
		}
	}
	end := len(sel)
	if limit > 0 && start+limit < end {
		end = start + limit
	}

	w.Header().Set("Content-Type", "application/json")
	bw := bufio.NewWriterSize(w, 256<<10)
	fmt.Fprintf(bw, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"%d"`, s.listRV)
	if end < len(sel) {
		fmt.Fprintf(bw, `,"continue":"%s","remainingItemCount":%d`, s.encodeContinue(end), len(sel)-end)
	}
	bw.WriteString(`},"items":[`)
	for k, i := range sel[start:end] {
		if k > 0 {
			bw.WriteByte(',')
		}
		p := &s.pods[i]
		bw.Write(p.head)
		bw.WriteString(podRV(i))
		bw.Write(p.tail)
	}
	bw.WriteString("]}\n")
	_ = bw.Flush()
}

func (s *server) encodeContinue(offset int) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "%d/%d", s.listRV, offset))
}

func (s *server) decodeContinue(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, err
	}
	rv, off, ok := strings.Cut(string(b), "/")
	if !ok || rv != strconv.FormatUint(s.listRV, 10) {
		return 0, fmt.Errorf("bad token %q", b)
	}
	return strconv.Atoi(off)
}

// event writes one watch event of pod i at resourceVersion rv.
func (s *server) event(bw *bufio.Writer, typ string, i int, rv string) {
	p := &s.pods[i]
	bw.WriteString(`{"type":"`)
	bw.WriteString(typ)
	bw.WriteString(`","object":{"kind":"Pod","apiVersion":"v1",`)
	bw.Write(p.head[1:]) // the rendered pod starts with '{'
	bw.WriteString(rv)
	bw.Write(p.tail)
	bw.WriteString("}\n")
}

func bookmark(bw *bufio.Writer, rv uint64, initialEnd bool) {
	ann := ""
	if initialEnd {
		ann = `,"annotations":{"k8s.io/initial-events-end":"true"}`
	}
	fmt.Fprintf(bw, `{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"%d","creationTimestamp":null%s},"spec":{"containers":null},"status":{}}}`+"\n", rv, ann)
}

// watch streams, in order: the initial events if asked (ADDED for every pod,
// then the initial-events-end bookmark), the burst of MODIFIED events newer
// than the requested version (after the trigger, if the server waits for
// one), a bookmark if allowed and events were sent, and then nothing until
// the client leaves or timeoutSeconds pass. As kube-apiserver 1.37 does
// (e2e.TestResumedWatchOnRealServer): a watch from a version older than
// the list's, which the server no longer holds, gets 200 and a 410 ERROR
// event, then its end, as the watch cache answers; a watch with nothing to
// send gets no bookmark.
func (s *server) watch(w http.ResponseWriter, r *http.Request, sel []int, opts httpwatch.ListOptions) {
	from, err := parseRV(opts.ResourceVersion)
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", "invalid resourceVersion: "+err.Error())
		return
	}
	last := s.listRV + uint64(s.burst)
	if from > last {
		status(w, http.StatusGatewayTimeout, "Timeout", "Too large resource version")
		return
	}
	bookmarks, initial := opts.AllowWatchBookmarks, opts.SendInitialEvents
	if initial && !bookmarks {
		status(w, http.StatusBadRequest, "BadRequest", "sendInitialEvents requires allowWatchBookmarks")
		return
	}
	if from != 0 && from < s.listRV && !initial {
		s.expired(w, from)
		return
	}
	ctx := r.Context()
	if secs := opts.TimeoutSeconds; secs > 0 {
		var cancel func()
		ctx, cancel = context.WithTimeout(ctx, time.Duration(secs)*time.Second)
		defer cancel()
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Transfer-Encoding", "chunked")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 256<<10)
	flush := func() bool { return bw.Flush() == nil && rc.Flush() == nil }

	if initial {
		s.initialEvents.Add(1)
		for _, i := range sel {
			s.event(bw, "ADDED", i, podRV(i))
		}
		bookmark(bw, s.listRV, true)
		from = s.listRV
	}
	if !flush() {
		return
	}
	if from == 0 {
		from = s.listRV
	}
	sends := from < last && len(sel) > 0
	if sends {
		if s.waitTrigger && !s.await(ctx) {
			return
		}
		for k := from - s.listRV; k < uint64(s.burst); k++ {
			s.event(bw, "MODIFIED", sel[int(k)%len(sel)], strconv.FormatUint(s.listRV+1+k, 10))
		}
	}
	if bookmarks && sends {
		bookmark(bw, last, false)
	}
	if !flush() {
		return
	}
	<-ctx.Done()
}

// expired answers a watch from a version the server forgot as the API
// server's watch cache does: 200, one ERROR event with a 410 Status, end.
func (s *server) expired(w http.ResponseWriter, from uint64) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: %d (%d)","reason":"Expired","code":410}}`+"\n", from, s.listRV)
}

// await blocks the calling watch until the next trigger; false if ctx ended
// first.
func (s *server) await(ctx context.Context) bool {
	s.mu.Lock()
	rel := s.release
	s.waiting++
	close(s.opened)
	s.opened = make(chan struct{})
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.waiting--
		s.mu.Unlock()
	}()
	select {
	case <-rel:
		return true
	case <-ctx.Done():
		return false
	}
}

// trigger releases the burst of every waiting watch. If none is waiting yet
// (the client synced before its watch reached the server), it waits up to
// 30 seconds for one.
func (s *server) trigger(w http.ResponseWriter, r *http.Request) {
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		if s.waiting > 0 {
			close(s.release)
			s.release = make(chan struct{})
			s.mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
			return
		}
		opened := s.opened
		s.mu.Unlock()
		select {
		case <-opened:
		case <-deadline.C:
			status(w, http.StatusConflict, "Conflict", "no watch is waiting for a burst")
			return
		case <-r.Context().Done():
			return
		}
	}
}

// Info describes the data set, for clients and the report.
type Info struct {
	Pods               int     `json:"pods"`
	Namespaces         int     `json:"namespaces"`
	ListRV             uint64  `json:"list_resource_version"`
	Burst              int     `json:"burst"`
	BytesPerObject     float64 `json:"bytes_per_object"`
	ManagedFieldsBytes float64 `json:"managed_fields_bytes_per_object"`
	// Requests counts the requests served so far, so a client can check
	// which ones it made.
	Requests struct {
		Lists         int64 `json:"lists"`
		Watches       int64 `json:"watches"`
		InitialEvents int64 `json:"initial_events_watches"`
	} `json:"requests"`
}

func (s *server) info(w http.ResponseWriter, r *http.Request) {
	n := float64(len(s.pods))
	w.Header().Set("Content-Type", "application/json")
	info := Info{
		Pods: len(s.pods), Namespaces: len(s.byNS), ListRV: s.listRV, Burst: s.burst,
		BytesPerObject: float64(s.bytes) / n, ManagedFieldsBytes: float64(s.managedFields) / n,
	}
	info.Requests.Lists = s.lists.Load()
	info.Requests.Watches = s.watches.Load()
	info.Requests.InitialEvents = s.initialEvents.Load()
	_ = json.NewEncoder(w).Encode(info)
}
