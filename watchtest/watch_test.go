package watchtest_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

func watchPath(ns string, q url.Values) string {
	q = cloneQuery(q)
	q.Set("watch", "1")
	return podsPath(ns, "") + "?" + q.Encode()
}

func cloneQuery(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[k] = v
	}
	return out
}

// A watch from a list's resourceVersion misses nothing and repeats nothing
// (conformance 11, 16, 17, 20; decision 7).
func TestWatchFromResourceVersionReplaysExactly(t *testing.T) {
	s := newServer(t)
	start := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	b := mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	up, err := s.Update(watchtest.Pods, podJSON("ns", "a", map[string]string{"x": "1"}))
	require.NoError(t, err)
	del, err := s.Delete(watchtest.Pods, "ns", "b")
	require.NoError(t, err)
	mustCreate(t, s, watchtest.Pods, podJSON("other", "c", nil))

	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {rvOf(start)}}))
	got := w.nextN(3)
	assert.Equal(t, []string{
		"ADDED b " + rvOf(b),
		"MODIFIED a " + rvOf(gjson.ParseBytes(up.Raw())),
		"DELETED b " + rvOf(gjson.ParseBytes(del.Raw())),
	}, []string{got[0].String(), got[1].String(), got[2].String()})
	for _, e := range got {
		assert.Equal(t, "Pod", e.get("kind"), "watch events carry kind")
		assert.Equal(t, "v1", e.get("apiVersion"))
	}
	realFirst := splitLines(fixture(t, "watch-from-rv.jsonl"))[0]
	realObj := []byte(gjson.GetBytes(realFirst, "object").Raw)
	assert.Equal(t, keysOf(t, realObj)[:3], keysOf(t, got[0].Object)[:3], "kind, apiVersion, metadata first")

	// Then live events, in order.
	live := mustCreate(t, s, watchtest.Pods, podJSON("ns", "d", nil))
	assert.Equal(t, "ADDED d "+rvOf(live), w.next().String())
}

// Synthetic ADDED events for a watch from "" or "0" (conformance 19).
func TestWatchFromZeroStartsWithState(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	cur := s.ResourceVersion()

	for _, rv := range []string{"", "0"} {
		t.Run("rv="+rv, func(t *testing.T) {
			q := url.Values{}
			if rv != "" {
				q.Set("resourceVersion", rv)
			}
			w := openWatch(t, s, watchPath("ns", q))
			got := w.nextN(2)
			assert.Equal(t, "ADDED a", got[0].Type+" "+got[0].get("metadata.name"), "synthetic ADDED in key order")
			assert.Equal(t, "ADDED b", got[1].Type+" "+got[1].get("metadata.name"))
		})
	}

	// With bookmarks allowed, a watch from "0" marks the end of the
	// initial state as the real server does (fixture crd-watch.jsonl).
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {"0"}, "allowWatchBookmarks": {"true"}}))
	w.nextN(2)
	bm := w.next()
	assert.Equal(t, "BOOKMARK", bm.Type)
	assert.Equal(t, cur, bm.get("metadata.resourceVersion"))
	assert.Equal(t, "true", bm.get(`metadata.annotations.k8s\.io/initial-events-end`))

	s.AddResource(widgets, widget)
	cw := openWatch(t, s, "/apis/example.com/v1/widgets?watch=1&resourceVersion=0&allowWatchBookmarks=true")
	e := cw.next()
	realFirst := []byte(gjson.GetBytes(fixture(t, "crd-watch.jsonl"), "object").Raw)
	assert.Equal(t, "BOOKMARK", e.Type, "an empty initial state is just the bookmark")
	assert.Equal(t, sortedKeys(t, realFirst), sortedKeys(t, e.Object))
	assert.Equal(t, sortedKeys(t, []byte(gjson.GetBytes(realFirst, "metadata").Raw)), sortedKeys(t, []byte(gjson.Get(string(e.Object), "metadata").Raw)))
}

// The streaming list a WatchList reflector opens (conformance 27, 28).
func TestWatchList(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("fixtures", "web-3", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("fixtures", "web-1", nil))
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"other","namespace":"fixtures"}}`)
	cur := s.ResourceVersion()
	q := url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"true"}}

	for _, rv := range []string{"", "0", "2"} {
		t.Run("rv="+rv, func(t *testing.T) {
			q := cloneQuery(q)
			q.Set("resourceVersion", rv)
			w := openWatch(t, s, watchPath("fixtures", q))
			got := w.nextN(3)
			assert.Equal(t, "ADDED web-1", got[0].Type+" "+got[0].get("metadata.name"))
			assert.Equal(t, "ADDED web-3", got[1].Type+" "+got[1].get("metadata.name"))
			assert.Equal(t, "BOOKMARK", got[2].Type)
			assert.Equal(t, cur, got[2].get("metadata.resourceVersion"), "the bookmark is at the snapshot's version")
			assert.Equal(t, "true", got[2].get(`metadata.annotations.k8s\.io/initial-events-end`))
		})
	}

	// The frames look like the real server's (fixture watchlist-stream.jsonl).
	w := openWatch(t, s, watchPath("fixtures", q))
	got := w.nextN(3)
	lines := splitLines(fixture(t, "watchlist-stream.jsonl"))
	realAdded, realBookmark := lines[0], lines[len(lines)-1]
	assert.Equal(t, []string{"type", "object"}, keysOf(t, realAdded))
	assert.Equal(t, keysOf(t, []byte(gjson.GetBytes(realAdded, "object").Raw))[:3], keysOf(t, got[0].Object)[:3], "kind, apiVersion, metadata first")
	assert.Equal(t, gjson.GetBytes(realBookmark, "object.metadata.annotations").Raw, gjson.GetBytes(got[2].Object, "metadata.annotations").Raw)

	// Live events follow on the same stream.
	up, err := s.Update(watchtest.Pods, podJSON("fixtures", "web-1", map[string]string{"tier": "gold"}))
	require.NoError(t, err)
	assert.Equal(t, "MODIFIED web-1 "+rvOf(gjson.ParseBytes(up.Raw())), w.next().String())

	// Without allowWatchBookmarks the real server accepts the request and
	// sends no bookmark.
	q.Del("allowWatchBookmarks")
	nb := openWatch(t, s, watchPath("fixtures", q))
	nb.nextN(2)
	mustCreate(t, s, watchtest.Pods, podJSON("fixtures", "web-9", nil))
	assert.Equal(t, "ADDED web-9", nb.next().Type+" web-9")
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytesSplit(b) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func bytesSplit(b []byte) [][]byte {
	var out [][]byte
	start := 0
	for i, c := range b {
		if c == '\n' {
			out = append(out, b[start:i])
			start = i + 1
		}
	}
	return append(out, b[start:])
}

// Rejected streaming lists, after which a reflector falls back to a paged
// list (conformance 30).
func TestWatchOptionsValidation(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name string
		q    url.Values
		msg  string
	}{
		{"match without sendInitialEvents", url.Values{"resourceVersionMatch": {"NotOlderThan"}}, "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"},
		{"sendInitialEvents without match", url.Values{"sendInitialEvents": {"true"}}, "resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{"sendInitialEvents=false without match", url.Values{"sendInitialEvents": {"false"}}, "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"},
		{"exact match", url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"Exact"}}, `resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := get(t, s, watchPath("ns", tt.q))
			assert.Equal(t, http.StatusUnprocessableEntity, code)
			assert.Contains(t, gjson.GetBytes(body, "message").String(), tt.msg)
		})
	}

	// An old server refuses streaming lists before any stream starts.
	s.RefuseWatchList(true)
	code, body := get(t, s, watchPath("ns", url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"1"}}))
	assert.Equal(t, http.StatusUnprocessableEntity, code)
	assert.Equal(t, `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`, gjson.GetBytes(body, "message").String())
	assert.Equal(t, "FieldValueForbidden", gjson.GetBytes(body, "details.causes.0.reason").String())
	s.RefuseWatchList(false)
	w := openWatch(t, s, watchPath("ns", url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "allowWatchBookmarks": {"1"}}))
	assert.Equal(t, "BOOKMARK", w.next().Type)
}

func TestWatchBoolParameter(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	for _, v := range []string{"1", "true", "yes", "True"} {
		w := openWatch(t, s, "/api/v1/pods?watch="+v)
		assert.Equal(t, "ADDED", w.next().Type, v)
	}
	for _, v := range []string{"0", "false", "no", "off"} {
		l := list(t, s, "/api/v1/pods?watch="+v)
		assert.Equal(t, "PodList", l.Get("kind").String(), v)
	}
}

// Bookmarks move a client's resourceVersion without an object (conformance
// 17).
func TestBookmarks(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	from := s.ResourceVersion()
	with := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {from}, "allowWatchBookmarks": {"true"}}))
	without := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {from}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 2))

	s.SendBookmarks()
	bm := with.next()
	assert.Equal(t, "BOOKMARK", bm.Type)
	assert.Equal(t, from, bm.get("metadata.resourceVersion"))
	assert.Equal(t, "Pod", bm.get("kind"))
	assert.False(t, gjson.GetBytes(bm.Object, "metadata.annotations").Exists(), "periodic bookmarks carry no annotation")

	// Bookmarks follow the events before them.
	o := mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	s.SendBookmarks()
	assert.Equal(t, "ADDED b "+rvOf(o), with.next().String())
	assert.Equal(t, "BOOKMARK  "+rvOf(o), with.next().String())
	assert.Equal(t, "ADDED b "+rvOf(o), without.next().String(), "no bookmark without allowWatchBookmarks")
}

// A watch ends cleanly at timeoutSeconds, and the client re-watches
// (conformance 10, 20).
func TestPeriodicBookmarksAndTimeout(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	clk := clock.NewFake(time.Unix(0, 0))
	s.Clock = clk
	s.BookmarkInterval = time.Minute
	s.Start()
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {s.ResourceVersion()}, "allowWatchBookmarks": {"1"}, "timeoutSeconds": {"90"}}))
	require.NoError(t, s.WaitForWatches(ctx, 1))
	// The bookmark loop, the watch's timeout and its bookmark 2 s before.
	require.NoError(t, clk.WaitForWaiters(ctx, 3))
	clk.Step(time.Minute)
	assert.Equal(t, "BOOKMARK", w.next().Type)
	clk.Step(28 * time.Second)
	last := w.next()
	assert.Equal(t, "BOOKMARK", last.Type, "2 s before the deadline, as the real server's")
	assert.Equal(t, s.ResourceVersion(), last.get("metadata.resourceVersion"))
	clk.Step(2 * time.Second)
	assert.NoError(t, w.end(), "timeoutSeconds ends the stream cleanly")
}

func TestWatchSelectorsFollowMatching(t *testing.T) {
	s := newServer(t)
	from := s.ResourceVersion()
	w := openWatch(t, s, watchPath("", url.Values{"resourceVersion": {from}, "labelSelector": {"tier=gold"}}))
	fw := openWatch(t, s, watchPath("", url.Values{"resourceVersion": {from}, "fieldSelector": {"metadata.namespace=a"}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 2))

	mustCreate(t, s, watchtest.Pods, podJSON("a", "p", map[string]string{"tier": "silver"}))
	gold, err := s.Update(watchtest.Pods, podJSON("a", "p", map[string]string{"tier": "gold"}))
	require.NoError(t, err)
	gold2, err := s.Update(watchtest.Pods, podJSON("a", "p", map[string]string{"tier": "gold", "x": "y"}))
	require.NoError(t, err)
	silver, err := s.Update(watchtest.Pods, podJSON("a", "p", map[string]string{"tier": "silver"}))
	require.NoError(t, err)
	mustCreate(t, s, watchtest.Pods, podJSON("b", "q", map[string]string{"tier": "gold"}))

	assert.Equal(t, "ADDED p "+rvOf(gjson.ParseBytes(gold.Raw())), w.next().String(), "starts matching: ADDED")
	assert.Equal(t, "MODIFIED p "+rvOf(gjson.ParseBytes(gold2.Raw())), w.next().String())
	left := w.next()
	assert.Equal(t, "DELETED p "+rvOf(gjson.ParseBytes(silver.Raw())), left.String(), "stops matching: DELETED at the change's version")
	assert.Equal(t, "gold", left.get("metadata.labels.tier"), "with the last state that matched")
	assert.Equal(t, "ADDED q", w.next().Type+" q")

	assert.Equal(t, []string{"ADDED", "MODIFIED", "MODIFIED", "MODIFIED"}, []string{fw.next().Type, fw.next().Type, fw.next().Type, fw.next().Type})

	// The fixture: a labelled watch from "0" starts with the matching state.
	lw := openWatch(t, s, watchPath("", url.Values{"resourceVersion": {"0"}, "labelSelector": {"tier=gold"}}))
	assert.Equal(t, "ADDED q", lw.next().Type+" q")
}

func TestWatchOneObjectByName(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	w := openWatch(t, s, podsPath("ns", "b")+"?watch=true")
	e := w.next()
	assert.Equal(t, "ADDED b", e.Type+" "+e.get("metadata.name"))
	_, err := s.Update(watchtest.Pods, podJSON("ns", "a", map[string]string{"x": "1"}))
	require.NoError(t, err)
	up, err := s.Update(watchtest.Pods, podJSON("ns", "b", map[string]string{"x": "1"}))
	require.NoError(t, err)
	assert.Equal(t, "MODIFIED b "+rvOf(gjson.ParseBytes(up.Raw())), w.next().String(), "only the named object")
}

// Both forms of 410 a reflector must handle the same way (conformance 1,
// 6, 7, 13).
func TestWatchCompacted(t *testing.T) {
	s := newServer(t)
	old := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	require.NoError(t, s.Compact(s.ResourceVersion()))

	// By default: HTTP 200 and one ERROR event, byte for byte the real one.
	code, body := get(t, s, watchPath("ns", url.Values{"resourceVersion": {rvOf(old)}}))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, string(fixture(t, "watch-too-old-rv.jsonl")), string(body))

	// From the compaction point itself, all is still there.
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {s.ResourceVersion()}}))
	c := mustCreate(t, s, watchtest.Pods, podJSON("ns", "c", nil))
	assert.Equal(t, "ADDED c "+rvOf(c), w.next().String())

	// Or as an HTTP status.
	s2 := watchtest.NewUnstartedServer()
	s2.ExpiredWatchAsStatus = true
	s2.Start()
	defer s2.Close()
	o := mustCreate(t, s2, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s2, watchtest.Pods, podJSON("ns", "b", nil))
	require.NoError(t, s2.Compact(s2.ResourceVersion()))
	code, body = get(t, s2, watchPath("ns", url.Values{"resourceVersion": {rvOf(o)}}))
	assert.Equal(t, http.StatusGone, code)
	assert.Equal(t, compact(t, []byte(gjson.GetBytes(fixture(t, "watch-too-old-rv.jsonl"), "object").Raw)), compact(t, body))
}

func TestHistoryLimit(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.HistoryLimit = 3
	s.Start()
	defer s.Close()
	first := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	var last gjson.Result
	for i := range 5 {
		b, err := s.Update(watchtest.Pods, podJSON("ns", "a", map[string]string{"i": strconv.Itoa(i)}))
		require.NoError(t, err)
		last = gjson.ParseBytes(b.Raw())
	}
	_, body := get(t, s, watchPath("ns", url.Values{"resourceVersion": {rvOf(first)}}))
	assert.Equal(t, "Expired", gjson.GetBytes(body, "object.reason").String(), "beyond the window: 410")

	lastRV, _ := strconv.Atoi(rvOf(last))
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {strconv.Itoa(lastRV - 3)}}))
	got := w.nextN(3)
	assert.Equal(t, rvOf(last), got[2].get("metadata.resourceVersion"), "the last three changes are replayed")

	// Lists are unaffected: a not-older-than read needs no history.
	assert.Len(t, list(t, s, listPath("ns", url.Values{"resourceVersion": {rvOf(first)}})).Get("items").Array(), 1)
}

func TestWatchFromFutureWaits(t *testing.T) {
	s := newServer(t)
	cur, _ := strconv.Atoi(s.ResourceVersion())
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {strconv.Itoa(cur + 2)}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 1))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	c := mustCreate(t, s, watchtest.Pods, podJSON("ns", "c", nil))
	assert.Equal(t, "ADDED c "+rvOf(c), w.next().String(), "events up to the requested version are not sent")

	// A streaming list for a future version fails in the stream with the
	// too-large Status once TooLargeWait is up.
	code, body := get(t, s, watchPath("ns", url.Values{"sendInitialEvents": {"true"}, "resourceVersionMatch": {"NotOlderThan"}, "resourceVersion": {"1000"}}))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ERROR", gjson.GetBytes(body, "type").String())
	assert.Equal(t, "ResourceVersionTooLarge", gjson.GetBytes(body, "object.details.causes.0.reason").String())
}

// Many writers and many watchers at once: every watcher sees every event,
// in resourceVersion order.
func TestConcurrentWritersAndWatchers(t *testing.T) {
	s := newServer(t)
	const watchers, writers, perWriter = 8, 4, 50
	from := s.ResourceVersion()
	ws := make([]*watch, watchers)
	for i := range ws {
		ws[i] = openWatch(t, s, watchPath("", url.Values{"resourceVersion": {from}}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, watchers))

	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			for j := range perWriter {
				name := fmt.Sprintf("w%d-%d", i, j)
				if _, err := s.Create(watchtest.Pods, podJSON("ns", name, nil)); err != nil {
					t.Error(err)
					return
				}
				if j%3 == 0 {
					if _, err := s.Delete(watchtest.Pods, "ns", name); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	testwait.Group(t, &wg, "the writers to finish")
	total := writers*perWriter + writers*((perWriter+2)/3)
	for _, w := range ws {
		last := 0
		for _, e := range w.nextN(total) {
			rv, err := strconv.Atoi(e.get("metadata.resourceVersion"))
			require.NoError(t, err)
			require.Greater(t, rv, last, "events in resourceVersion order")
			last = rv
		}
	}
}
