package apiserve_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// obj is a test object: its key, the value of its label app, its JSON.
type obj struct {
	key, app string
	body     []byte
}

// hist is a minimal History over a Log: the current objects and the
// events that led there. A request's selection is an app value (sel).
type hist struct {
	mu    sync.Mutex
	clk   clock.Clock
	rv    int64
	objs  map[string]*obj
	log   apiserve.Log[*obj]
	moved chan struct{}
}

func newHist(clk clock.Clock, rv int64) *hist {
	h := &hist{clk: clk, rv: rv, objs: map[string]*obj{}, moved: make(chan struct{})}
	h.log.Clock = clk
	h.log.Reset(rv)
	return h
}

func body(key, app string, rv int64) []byte {
	return fmt.Appendf(nil, `{"metadata":{"name":%q,"labels":{"app":%q},"resourceVersion":"%d"}}`, key, app, rv)
}

// set records a change of key to app (add when new), or a delete when
// app is "-".
func (h *hist) set(key, app string) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rv++
	prev := h.objs[key]
	o := &obj{key: key, app: app, body: body(key, app, h.rv)}
	typ := apiserve.Modified
	switch {
	case app == "-":
		typ, o = apiserve.Deleted, &obj{key: key, app: prev.app, body: body(key, prev.app, h.rv)}
		delete(h.objs, key)
	case prev == nil:
		typ = apiserve.Added
		h.objs[key] = o
	default:
		h.objs[key] = o
	}
	h.log.Append(apiserve.Event[*obj]{Type: typ, RV: h.rv, Object: o, Prev: prev})
	h.wake()
	return h.rv
}

func (h *hist) wake() { close(h.moved); h.moved = make(chan struct{}) }

func (h *hist) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.log.Reset(h.rv)
	h.wake()
}

// sel is hist narrowed to the objects whose app is app ("" all).
type sel struct {
	*hist
	app string
}

func (s sel) Match(o *obj) bool          { return s.app == "" || o.app == s.app }
func (s sel) Body(o *obj) []byte         { return o.body }
func (s sel) Read(f func(apiserve.View)) { s.mu.Lock(); defer s.mu.Unlock(); f(s) }
func (s sel) ResourceVersion() int64     { return s.rv }
func (s sel) Floor() int64               { return s.log.Floor() }

func (s sel) List(int64, string, int) ([]apiserve.Item, bool, int64) {
	var out []apiserve.Item
	for _, o := range s.objs {
		if s.Match(o) {
			out = append(out, apiserve.Item{Key: o.key, Body: o.body})
		}
	}
	slices.SortFunc(out, func(a, b apiserve.Item) int { return cmpStr(a.Key, b.Key) })
	return out, false, 0
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func (s sel) Now() (int64, uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv, s.log.Epoch(), s.moved
}

func (s sel) Since(buf []apiserve.Event[*obj], after int64, epoch uint64, max int) ([]apiserve.Event[*obj], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.Since(buf, after, epoch, max)
}

// WaitFor waits up to 3 s of the clock for rv.
func (s sel) WaitFor(ctx context.Context, rv int64) (int64, bool) {
	t := s.clk.NewTimer(3 * time.Second)
	defer t.Stop()
	for {
		cur, _, moved := s.Now()
		if cur >= rv {
			return cur, true
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

// watch opens a watch of h narrowed to app with query q and returns its
// lines as "TYPE name rv" ("BOOKMARK rv", "ERROR code message").
func watch(t *testing.T, h *hist, app string, q apiserve.WatchQuery) <-chan string {
	t.Helper()
	return watchAs(t, h, app, q, apiserve.WatchStream{Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}, Clock: h.clk})
}

// watchAs is watch written as s says.
func watchAs(t *testing.T, h *hist, app string, q apiserve.WatchQuery, s apiserve.WatchStream) <-chan string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiserve.ServeWatch(r.Context(), w, sel{h, app}, q, s)
	}))
	// Bounded: a broken watch fails the test in seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	lines := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			lines <- err.Error()
			return
		}
		defer resp.Body.Close()
		lines <- resp.Status
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			select {
			case lines <- line(sc.Bytes()):
			case <-ctx.Done():
				return
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		srv.Close()
	})
	return lines
}

// open is watch once the watch has started: every later change reaches
// it.
func open(t *testing.T, h *hist, app string, q apiserve.WatchQuery) <-chan string {
	t.Helper()
	lines := watch(t, h, app, q)
	require.Equal(t, []string{"200 OK"}, next(t, lines, 1))
	return lines
}

func line(b []byte) string {
	ev := gjson.ParseBytes(b)
	o := ev.Get("object")
	switch ev.Get("type").String() {
	case "BOOKMARK":
		s := "BOOKMARK " + o.Get("metadata.resourceVersion").String()
		if o.Get(`metadata.annotations.k8s\.io/initial-events-end`).Exists() {
			s += " end"
		}
		return s
	case "ERROR":
		return "ERROR " + o.Get("code").String() + " " + o.Get("message").String()
	}
	if o.Get("kind").String() != "ConfigMap" {
		return "no kind: " + string(b)
	}
	return ev.Get("type").String() + " " + o.Get("metadata.name").String() + " " + o.Get("metadata.resourceVersion").String()
}

// next reads n lines, failing after 5 s.
func next(t *testing.T, lines <-chan string, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(5 * time.Second)
	for len(got) < n {
		select {
		case l, ok := <-lines:
			if !ok {
				return append(got, "EOF")
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("after %v: timed out waiting for %d lines", got, n)
		}
	}
	return got
}

func ended(t *testing.T, lines <-chan string) {
	t.Helper()
	require.Equal(t, []string{"EOF"}, next(t, lines, 1))
}

// Decision 44: a watch from N replays the events after N in order, each
// once, then follows live.
func TestServeWatchReplaysThenFollows(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	h.set("a", "x") // 11
	from := h.set("b", "x")
	h.set("a", "y") // 13
	h.set("b", "-") // 14
	lines := open(t, h, "", apiserve.WatchQuery{ResourceVersion: strconv.FormatInt(from, 10), StartRV: from})
	require.Equal(t, []string{"MODIFIED a 13", "DELETED b 14"}, next(t, lines, 2))
	h.set("c", "x")
	require.Equal(t, []string{"ADDED c 15"}, next(t, lines, 1))
}

// Decision 44: a watch from a version older than the history is a 200
// stream with the watch cache's 410 ERROR event; so is a watch whose
// history started again (an epoch later).
func TestServeWatchTooOld(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	h.log.Max = 2
	for range 4 {
		h.set("a", "x") // 11..14: 13 and 14 kept
	}
	lines := open(t, h, "", apiserve.WatchQuery{ResourceVersion: "11", StartRV: 11})
	require.Equal(t, []string{"ERROR 410 too old resource version: 11 (12)", "EOF"}, next(t, lines, 2))

	lines = open(t, h, "", apiserve.WatchQuery{ResourceVersion: "12", StartRV: 12})
	require.Equal(t, []string{"MODIFIED a 13", "MODIFIED a 14"}, next(t, lines, 2))
	h.reset()
	require.Equal(t, []string{"ERROR 410 too old resource version: 14 (14)", "EOF"}, next(t, lines, 2))
}

// Decision 44: sendInitialEvents=true from a version the store has not
// reached waits 3 s, then ends with the "Too large resource version"
// ERROR and its Retry-After; a plain watch from there gets the events
// after it once they come, as the real watch cache does.
func TestServeWatchTooLarge(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	h := newHist(clk, 10)
	yes := true
	lines := watch(t, h, "", apiserve.WatchQuery{ResourceVersion: "12", StartRV: 12, SendInitialEvents: &yes, AllowBookmarks: true})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 1))
	clk.Step(3 * time.Second)
	require.Equal(t, []string{"200 OK", "ERROR 504 Timeout: Too large resource version: 12, current: 10", "EOF"}, next(t, lines, 3))

	lines = open(t, h, "", apiserve.WatchQuery{ResourceVersion: "12", StartRV: 12, AllowBookmarks: true})
	require.NoError(t, clk.WaitForWaiters(ctx, 1)) // its bookmark timer
	clk.Step(time.Minute)                          // no bookmark: it has received nothing
	h.set("a", "x")                                // 11
	h.set("a", "x")                                // 12
	h.set("a", "x")                                // 13
	require.Equal(t, []string{"MODIFIED a 13"}, next(t, lines, 1))
}

// Decision 44: sendInitialEvents=true (and a legacy watch from "0")
// sends the state as ADDED events, then the initial-events-end bookmark
// when bookmarks are allowed; "" sends the state without it.
func TestServeWatchInitialEvents(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		name string
		q    apiserve.WatchQuery
		want []string
	}{
		{"sendInitialEvents", apiserve.WatchQuery{ResourceVersion: "", SendInitialEvents: &yes, AllowBookmarks: true}, []string{"ADDED a 12", "ADDED b 11", "BOOKMARK 12 end"}},
		{"from 0", apiserve.WatchQuery{ResourceVersion: "0", AllowBookmarks: true}, []string{"ADDED a 12", "ADDED b 11", "BOOKMARK 12 end"}},
		{"from latest", apiserve.WatchQuery{AllowBookmarks: true}, []string{"ADDED a 12", "ADDED b 11", "MODIFIED a 13"}},
		{"without initial events", apiserve.WatchQuery{SendInitialEvents: &no, AllowBookmarks: true}, []string{"MODIFIED a 13"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
			h.set("b", "x")
			h.set("a", "x")
			lines := open(t, h, "", tc.q)
			got := next(t, lines, len(tc.want)-1)
			if len(got) < len(tc.want) {
				h.set("a", "x") // the event that follows
				got = append(got, next(t, lines, 1)...)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// Decision 44: with a selector, an object leaving it is DELETED with its
// last state there at the event's version, one entering it ADDED.
func TestServeWatchSelectorEntersAndLeaves(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	h.set("a", "x") // 11
	lines := open(t, h, "x", apiserve.WatchQuery{ResourceVersion: "10", StartRV: 10})
	h.set("a", "y") // 12: leaves
	h.set("b", "y") // 13: never seen
	h.set("b", "x") // 14: enters
	h.set("b", "-") // 15: deleted while selected
	require.Equal(t, []string{"ADDED a 11", "DELETED a 12", "ADDED b 14", "DELETED b 15"}, next(t, lines, 4))
}

// Decision 44: bookmarks every minute at the version the watcher has
// received (the version reached, when caught up), and one 2 s before
// the watch's deadline, which then ends it.
func TestServeWatchBookmarks(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	h := newHist(clk, 10)
	lines := open(t, h, "x", apiserve.WatchQuery{StartRV: 10, ResourceVersion: "10", AllowBookmarks: true, Timeout: 90 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 2))
	h.set("a", "y") // 11, not selected
	h.set("b", "x") // 12
	require.Equal(t, []string{"ADDED b 12"}, next(t, lines, 1))
	clk.Step(time.Minute)
	require.Equal(t, []string{"BOOKMARK 12"}, next(t, lines, 1))
	require.NoError(t, clk.WaitForWaiters(ctx, 2))
	clk.Step(28 * time.Second) // 88 s: 2 s before the deadline
	require.Equal(t, []string{"BOOKMARK 12"}, next(t, lines, 1))
	clk.Step(2 * time.Second)
	ended(t, lines)
}

// Decision 44: the history holds between Min and Max events, doubling
// while its oldest is younger than Fresh, halving once its newest
// quarter is older, dropping the oldest otherwise.
func TestLogBounds(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	l := apiserve.Log[int]{Min: 4, Max: 16, Fresh: 10 * time.Second, Clock: clk}
	l.Reset(0)
	add := func(n int) {
		for range n {
			rv := int64(l.Len()) + l.Floor() + 1
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv})
		}
	}
	add(20) // all fresh: grows 4, 8, 16, then drops
	require.Equal(t, 16, l.Len())
	require.Equal(t, int64(4), l.Floor())
	clk.Step(11 * time.Second)
	add(1) // full, all old: halves to 8
	require.Equal(t, 8, l.Len())
	require.Equal(t, int64(13), l.Floor())
	_, err := l.Since(nil, 12, l.Epoch(), 100)
	require.EqualError(t, err, "too old resource version: 12 (13)")
	evs, err := l.Since(nil, 19, l.Epoch(), 100)
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, int64(21), evs[1].RV)
}

// Decision 44: an Item's Body may be whole, as a watch delivered it: a
// built-in list's items are written without kind and apiVersion, a
// custom list's and an event's objects as they are; a list from "0"
// ignores limit, as the watch cache does.
func TestWholeBodiesAndListFromZero(t *testing.T) {
	st := &versions{objs: map[string][]version{}}
	st.put("ns/a", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"1"}}`)
	st.put("ns/b", `{"metadata":{"name":"b","resourceVersion":"2"}}`)
	cms := apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}
	code, l := serveList(t, st, apiserve.ListQuery{ResourceVersion: "0", Limit: 1}, cms)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, `[{"metadata":{"name":"a","resourceVersion":"1"}},{"metadata":{"name":"b","resourceVersion":"2"}}]`, l.Get("items").Raw)
	require.False(t, l.Get("metadata.continue").Exists())

	p := cms.Prefix()
	whole := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}`)
	require.Equal(t, `{"type":"ADDED","object":`+string(whole)+"}\n", string(apiserve.AppendEvent(nil, apiserve.Added, p, whole, 1, nil)))
	require.Equal(t, string(whole), string(apiserve.Whole(p, whole)))
	require.Equal(t, `{"metadata":{"name":"a","resourceVersion":"9"}}`, string(apiserve.WithVersion([]byte(`{"metadata":{"name":"a","resourceVersion":"1"}}`), 9)))
}

// Decision 44: a server with a bookmark schedule of its own (a test
// server's) asks for each bookmark, which follows the events before it;
// the watch then has no timer of its own; Started tells when its start
// is fixed.
func TestServeWatchServersOwnBookmarks(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	h := newHist(clk, 10)
	ask := make(chan struct{}, 2)
	started := make(chan struct{})
	lines := watchAs(t, h, "", apiserve.WatchQuery{ResourceVersion: "10", StartRV: 10, AllowBookmarks: true}, apiserve.WatchStream{
		Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}, Clock: clk,
		BookmarkEvery: -1, Bookmarks: ask, Started: func() { close(started) }})
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the watch never started")
	}
	require.Equal(t, []string{"200 OK"}, next(t, lines, 1))
	h.set("a", "x") // 11
	ask <- struct{}{}
	ask <- struct{}{}
	require.Equal(t, []string{"ADDED a 11", "BOOKMARK 11", "BOOKMARK 11"}, next(t, lines, 3))
	require.Zero(t, clk.Waiters(), "no timer of its own")
}

// A watch whose server keeps its own bookmark schedule (watchtest's)
// still gets the real server's last bookmark, 2 s before its deadline,
// and no other (decision 44).
func TestServeWatchServersOwnBookmarksKeepTheLastOne(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	h := newHist(clk, 10)
	lines := watchAs(t, h, "", apiserve.WatchQuery{ResourceVersion: "10", StartRV: 10, AllowBookmarks: true, Timeout: 5 * time.Minute},
		apiserve.WatchStream{Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}, Clock: clk, BookmarkEvery: -1})
	require.Equal(t, []string{"200 OK"}, next(t, lines, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, clk.WaitForWaiters(ctx, 2), "the timeout and the last bookmark")
	h.set("a", "x") // 11
	require.Equal(t, []string{"ADDED a 11"}, next(t, lines, 1))
	clk.Step(5*time.Minute - 2*time.Second - time.Millisecond)
	require.Equal(t, 2, clk.Waiters(), "not yet")
	clk.Step(time.Millisecond)
	require.Equal(t, []string{"BOOKMARK 11"}, next(t, lines, 1))
	require.Equal(t, 1, clk.Waiters(), "the timeout alone: no bookmark after the last")
}
