package watchtest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Injected failures carry the Status and headers a client decides on
// (conformance 1, 7, 22: 429 with Retry-After).
func TestFailNext(t *testing.T) {
	s := newServer(t)
	s.FailNext(watchtest.Failure{Code: http.StatusTooManyRequests, RetryAfter: 1500 * time.Millisecond, Verbs: []string{"list"}, Times: 2})
	s.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable})

	// The first request not a list takes the second failure.
	code, body, _ := do(t, s, http.MethodPost, "/api/v1/namespaces/ns/pods", podJSON("ns", "a", nil))
	assert.Equal(t, http.StatusServiceUnavailable, code)
	assert.Equal(t, "ServiceUnavailable", gjson.GetBytes(body, "reason").String())

	for range 2 {
		code, body, h := do(t, s, http.MethodGet, "/api/v1/namespaces/ns/pods", "")
		assert.Equal(t, http.StatusTooManyRequests, code)
		assert.Equal(t, "2", h.Get("Retry-After"), "rounded up to whole seconds")
		assert.Equal(t, "TooManyRequests", gjson.GetBytes(body, "reason").String())
		assert.Equal(t, int64(2), gjson.GetBytes(body, "details.retryAfterSeconds").Int())
		assert.Equal(t, []string{"kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"}, keysOf(t, body))
	}
	code, _ = get(t, s, "/api/v1/namespaces/ns/pods")
	assert.Equal(t, http.StatusOK, code, "the failures are used up")

	tests := []struct {
		code   int
		reason string
	}{
		{500, "InternalError"}, {503, "ServiceUnavailable"}, {410, "Expired"}, {504, "Timeout"}, {403, "Forbidden"}, {418, ""},
	}
	for _, tt := range tests {
		s.FailNext(watchtest.Failure{Code: tt.code})
		code, body := get(t, s, "/api/v1/pods")
		assert.Equal(t, tt.code, code)
		assert.Equal(t, tt.reason, gjson.GetBytes(body, "reason").String())
		assert.Equal(t, int64(tt.code), gjson.GetBytes(body, "code").Int())
	}

	s.FailNext(watchtest.Failure{Code: 500, Reason: "Custom", Message: "boom"})
	_, body = get(t, s, "/api/v1/pods")
	assert.Equal(t, "Custom", gjson.GetBytes(body, "reason").String())
	assert.Equal(t, "boom", gjson.GetBytes(body, "message").String())
}

// Errors inside a started stream (conformance 6, 13, 23).
func TestFailNextWatchInStream(t *testing.T) {
	s := newServer(t)
	s.FailNext(watchtest.Failure{Code: http.StatusGone, Verbs: []string{"watch"}, InStream: true})
	s.FailNext(watchtest.Failure{Code: http.StatusTooManyRequests, Verbs: []string{"watch"}, InStream: true})
	code, body := get(t, s, watchPath("ns", nil))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, string(fixture(t, "watch-too-old-rv.jsonl")), string(body), "an injected 410 reads like the real one")

	code, body = get(t, s, watchPath("ns", nil))
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ERROR", gjson.GetBytes(body, "type").String())
	assert.Equal(t, "TooManyRequests", gjson.GetBytes(body, "object.reason").String())
}

// A stream cut mid-frame: the client sees an unexpected EOF (conformance 4).
func TestCutNextWatchAfterBytes(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	mustCreate(t, s, watchtest.Pods, podJSON("ns", "b", nil))
	first := frameLen(t, s)
	cutAt := first + 10 // inside the second frame
	s.CutNextWatchAfterBytes(cutAt)
	resp, err := s.Client().Get(s.URL + watchPath("ns", url.Values{"resourceVersion": {"1"}}))
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the connection drops without the end of the chunked body")
	assert.Len(t, got, cutAt)

	dec := json.NewDecoder(bytes.NewReader(got))
	var e event
	require.NoError(t, dec.Decode(&e))
	assert.Equal(t, "ADDED", e.Type)
	assert.ErrorIs(t, dec.Decode(&e), io.ErrUnexpectedEOF, "the second frame is cut in the middle")

	// Only the next watch is cut.
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {"1"}}))
	assert.Len(t, w.nextN(2), 2)
}

// frameLen returns the length of the first frame of a watch from "1".
func frameLen(t *testing.T, s *watchtest.Server) int {
	t.Helper()
	s.CutNextWatchAfterEvents(1)
	resp, err := s.Client().Get(s.URL + watchPath("ns", url.Values{"resourceVersion": {"1"}}))
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	return len(b)
}

func TestCutNextWatchAfterEvents(t *testing.T) {
	s := newServer(t)
	from := s.ResourceVersion()
	for i := range 5 {
		mustCreate(t, s, watchtest.Pods, podJSON("ns", fmt.Sprintf("p%d", i), nil))
	}
	s.CutNextWatchAfterEvents(3)
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {from}}))
	assert.Len(t, w.nextN(3), 3)
	assert.ErrorIs(t, w.end(), io.ErrUnexpectedEOF)

	s.CutNextWatchAfterEvents(0)
	resp, err := s.Client().Get(s.URL + watchPath("ns", url.Values{"resourceVersion": {from}}))
	require.NoError(t, err, "the headers arrive before the cut")
	defer resp.Body.Close()
	_, err = io.ReadAll(resp.Body)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
}

func TestSlowWatches(t *testing.T) {
	s := newServer(t)
	from := s.ResourceVersion()
	o := mustCreate(t, s, watchtest.Pods, podJSON("ns", "a", nil))
	step := make(chan struct{})
	var pauses atomic.Int32
	s.SlowWatches(16, func() {
		pauses.Add(1)
		<-step
	})

	resp, err := s.Client().Get(s.URL + watchPath("ns", url.Values{"resourceVersion": {from}}))
	require.NoError(t, err)
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 16, n, "one piece at a time")
	assert.Equal(t, `{"type":"ADDED",`, string(buf[:n]))

	done := make(chan event)
	go func() {
		var e event
		_ = json.NewDecoder(io.MultiReader(bytes.NewReader(buf[:n]), resp.Body)).Decode(&e)
		done <- e
	}()
	deadline := time.After(testwait.Timeout)
	for {
		select {
		case step <- struct{}{}:
			continue
		case e := <-done:
			assert.Equal(t, "ADDED a "+rvOf(o), e.String())
		case <-deadline:
			t.Fatalf("the slowed watch did not deliver its event within %v", testwait.Timeout)
		}
		break
	}
	s.SlowWatches(0, nil)
	assert.Greater(t, pauses.Load(), int32(10))
}

// A watch whose client does not keep up is ended; writers never wait for
// it.
func TestSlowWatcherIsEnded(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.WatchBuffer = 2
	s.Start()
	defer s.Close()
	w, unstick := stuckWatch(t, s)
	assert.Equal(t, 0, s.OpenWatches(), "the watch was ended once its buffer overflowed")
	unstick()
	assert.Equal(t, "ADDED p0", w.next().Type+" "+"p0")
	assert.NoError(t, w.end(), "the stream ends cleanly after what was in flight")
}

// stuckWatch opens a watch of pods in ns on s, holds its handler in the
// write of the first event, and creates p0 to p9 meanwhile: one in flight
// and nine for the watch's buffer, which keeps them or overflows. unstick
// lets the handler go on and slows no further watch.
func stuckWatch(t *testing.T, s *watchtest.Server) (w *watch, unstick func()) {
	t.Helper()
	release := make(chan struct{})
	stuck := make(chan struct{}, 1)
	s.SlowWatches(1, func() {
		select {
		case stuck <- struct{}{}:
		default:
		}
		<-release
	})
	w = openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {s.ResourceVersion()}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 1))

	mustCreate(t, s, watchtest.Pods, podJSON("ns", "p0", nil))
	testwait.Recv(t, stuck, "the handler to start writing p0")
	for i := 1; i < 10; i++ {
		mustCreate(t, s, watchtest.Pods, podJSON("ns", fmt.Sprintf("p%d", i), nil))
	}
	return w, func() {
		s.SlowWatches(0, nil)
		close(release)
	}
}

// A restart: every watch ends at once, cleanly or abruptly (conformance 4,
// 20; decision 8 needs it for relists after a restart).
func TestCloseWatches(t *testing.T) {
	s := newServer(t)
	a := openWatch(t, s, watchPath("ns", nil))
	b := openWatch(t, s, "/api/v1/configmaps?watch=1")
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 2))
	s.CloseWatches()
	assert.NoError(t, a.end())
	assert.NoError(t, b.end())
	assert.Equal(t, 0, s.OpenWatches())

	// A crash instead: the connections drop.
	c := openWatch(t, s, watchPath("ns", nil))
	require.NoError(t, s.WaitForWatches(ctx, 1))
	s.CloseClientConnections()
	assert.Error(t, c.end(), "a dropped connection is not a clean end")
}

func TestCloseEndsOpenWatches(t *testing.T) {
	s := watchtest.NewServer()
	w := openWatch(t, s, watchPath("ns", url.Values{"allowWatchBookmarks": {"1"}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 1))
	s.Close() // returns although a watch was open; TestMain checks no goroutine is left
	_ = w.end()
	s.Close() // idempotent
}

func TestRequests(t *testing.T) {
	s := newServer(t)
	get(t, s, "/api/v1/namespaces/ns/pods?limit=5&labelSelector=app%3Dweb")
	do(t, s, http.MethodPost, "/api/v1/namespaces/ns/pods", podJSON("ns", "a", nil))
	get(t, s, "/api/v1/namespaces/ns/pods/a")
	do(t, s, http.MethodPut, "/api/v1/namespaces/ns/pods/a", podJSON("ns", "a", map[string]string{"x": "y"}))
	do(t, s, http.MethodDelete, "/api/v1/namespaces/ns/pods/a", "")
	get(t, s, "/api/v1/nothing")
	w := openWatch(t, s, watchPath("ns", url.Values{"resourceVersion": {"5"}}))
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	require.NoError(t, s.WaitForWatches(ctx, 1))
	w.stop()

	reqs := s.Requests()
	require.Len(t, reqs, 7)
	var verbs []string
	for _, r := range reqs {
		verbs = append(verbs, r.Verb)
		assert.False(t, r.Time.IsZero())
	}
	assert.Equal(t, []string{"list", "create", "get", "update", "delete", "", "watch"}, verbs)
	assert.Equal(t, "5", reqs[0].Query.Get("limit"))
	assert.Equal(t, "app=web", reqs[0].Query.Get("labelSelector"))
	assert.Equal(t, http.MethodPost, reqs[1].Method)
	assert.Equal(t, "/api/v1/namespaces/ns/pods/a", reqs[2].Path)
	assert.Equal(t, "5", reqs[6].Query.Get("resourceVersion"))
	reqs[0].Query.Set("limit", "changed")
	assert.Equal(t, "5", s.Requests()[0].Query.Get("limit"), "Requests returns copies")
}

// Failures can target the write verbs, and the request log names them and
// their subresource.
func TestFailNextWriteVerbs(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, deployment)
	s.FailNext(watchtest.Failure{Code: http.StatusConflict, Verbs: []string{"patch"}})
	s.FailNext(watchtest.Failure{Code: http.StatusInternalServerError, Verbs: []string{"deletecollection"}})

	code, _ := send(t, s, http.MethodGet, depPath+"d/scale", "", "")
	assert.Equal(t, http.StatusOK, code, "a get is not a patch")
	code, body := send(t, s, http.MethodPatch, depPath+"d/status", mergeType, `{"status":{"replicas":1}}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, "Conflict", gjson.GetBytes(body, "reason").String())
	code, _ = send(t, s, http.MethodDelete, "/apis/apps/v1/namespaces/prod/deployments", "", "")
	assert.Equal(t, http.StatusInternalServerError, code)
	code, _ = send(t, s, http.MethodPatch, depPath+"d/status", mergeType, `{"status":{"replicas":1}}`)
	assert.Equal(t, http.StatusOK, code, "the failures are used up")

	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.Verb+" "+r.Subresource)
	}
	assert.Equal(t, []string{"get scale", "patch status", "deletecollection ", "patch status"}, got)
}

// A failure is aimed at the write it is meant for: by patch type,
// subresource, namespace and name, or a predicate, so that a fault for an
// apply never hits a merge patch that happens to come first
// (decision 7).
func TestFailNextMatchesOneWrite(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, deployment)
	applyCT := "application/apply-patch+yaml"
	s.FailNext(watchtest.Failure{Code: http.StatusInternalServerError, Verbs: []string{"patch"}, PatchTypes: []string{applyCT}})
	s.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable, Subresources: []string{""}, Namespace: "prod", Name: "d"})
	s.FailNext(watchtest.Failure{Code: http.StatusTooManyRequests, Match: func(r watchtest.Request) bool {
		return r.Verb == "get" && r.Subresource == "scale"
	}})

	code, _ := send(t, s, http.MethodPatch, depPath+"d/status", mergeType, `{"status":{"replicas":1}}`)
	assert.Equal(t, http.StatusOK, code, "a merge patch of the status is none of them")
	code, _ = send(t, s, http.MethodGet, depPath+"d/scale", "", "")
	assert.Equal(t, http.StatusTooManyRequests, code, "the predicate's")
	code, _ = send(t, s, http.MethodPatch, depPath+"d/status?fieldManager=m", applyCT, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"}}`)
	assert.Equal(t, http.StatusInternalServerError, code, "the apply's")
	code, _ = send(t, s, http.MethodGet, "/apis/apps/v1/namespaces/other/deployments/d", "", "")
	assert.Equal(t, http.StatusNotFound, code, "another namespace")
	code, _ = send(t, s, http.MethodGet, depPath+"d", "", "")
	assert.Equal(t, http.StatusServiceUnavailable, code, "the object itself")

	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.Verb+" "+r.Namespace+"/"+r.Name+" "+r.Subresource+" "+r.PatchType)
	}
	assert.Equal(t, []string{
		"patch prod/d status " + mergeType, "get prod/d scale ", "patch prod/d status " + applyCT,
		"get other/d  ", "get prod/d  ",
	}, got)
}
