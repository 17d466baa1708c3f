package reflector

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runPolicyReflector runs r until the test ends.
func runPolicyReflector(t *testing.T, r *Reflector) (cancel func(), done <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	d := make(chan struct{})
	go func() { r.Run(ctx); close(d) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, d, "Run to return after cancel") })
	return cancel, d
}

// policyCtx bounds a test's waits.
func policyCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// serverQueries returns the query parameter key of every request of verb,
// in order.
func serverQueries(s *watchtest.Server, verb, key string) []string {
	var out []string
	for _, r := range s.Requests() {
		if r.Verb == verb {
			out = append(out, r.Query.Get(key))
		}
	}
	return out
}

// conformance 13, decision 1, conformance 10 11: end to end over HTTP. A
// watch whose stream reports 410 is followed, after a backoff, by a list
// whose resourceVersion query is the version of the last event the
// reflector received; every watch asks for bookmarks and for a timeout
// drawn from [300, 600) seconds.
func TestReflectorRelistAfterWatchGoneOverHTTP(t *testing.T) {
	s := serveOnePod(t)

	c := newTestClient(t, s.URL)
	t.Cleanup(c.CloseIdleConnections)
	sink := &recordSink{}
	r := New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), sink)
	r.PagedList = true
	fc := clock.NewFake(time.Unix(1000, 0))
	r.Clock = fc
	r.Random = func() float64 { return 0.5 }
	runPolicyReflector(t, r)
	ctx := policyCtx(t)

	require.NoError(t, s.WaitForWatches(ctx, 1))
	raw, err := s.Update(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns","labels":{"v":"2"}}}`)
	require.NoError(t, err)
	updated := raw.ResourceVersion()
	require.Eventually(t, func() bool { return r.LastSyncResourceVersion() == updated }, 10*time.Second, time.Millisecond)

	// The stream ends; the watch reopened at once gets an ERROR 410.
	s.FailNext(watchtest.Failure{Code: http.StatusGone, InStream: true, Verbs: []string{"watch"}})
	s.CloseWatches()
	require.NoError(t, fc.WaitForWaiters(ctx, 1), "the 410 is followed by a backoff")
	require.Len(t, serverQueries(s, "list", "resourceVersion"), 1, "no list before the backoff is over")
	fc.Step(time.Minute)
	require.Eventually(t, func() bool { return len(serverQueries(s, "watch", "resourceVersion")) == 3 }, 10*time.Second, time.Millisecond,
		"the relist is followed by a watch")

	listRVs := serverQueries(s, "list", "resourceVersion")
	assert.Equal(t, []string{"0", updated}, listRVs, "the relist reads the last synced version, not \"\"")
	watches := serverQueries(s, "watch", "resourceVersion")
	require.Len(t, watches, 3)
	assert.Equal(t, updated, watches[1], "the ended watch is resumed from its last event")
	for _, r := range s.Requests() {
		if r.Verb == "watch" {
			assert.Equal(t, "450", r.Query.Get("timeoutSeconds"), "300 + 0.5·300")
			assert.Equal(t, "true", r.Query.Get("allowWatchBookmarks"))
		}
	}
	assert.Equal(t, "replace 1@"+updated, sink.log()[len(sink.log())-1])
}

const (
	podListBody = `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[{"metadata":{"name":"a","namespace":"ns","resourceVersion":"9"}}]}`
	podAddFrame = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"b","namespace":"ns","resourceVersion":"11"}}}` + "\n"
)

// decision 6, conformance 4 24: a watch stream that cannot be decoded (here
// an HTML error page from a proxy after the first event) reaches OnError as
// a *SyncError wrapping the *DecodeError, counts in Stats().Errors, and
// makes the reflector relist after a backoff.
func TestReflectorReportsUndecodableStream(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if req.URL.Query().Get("watch") == "" {
			io.WriteString(w, podListBody)
			return
		}
		io.WriteString(w, podAddFrame)
		w.(http.Flusher).Flush()
		io.WriteString(w, "<html>502 Bad Gateway</html>\n")
	})
	c := newTestClient(t, srv.URL)
	t.Cleanup(c.CloseIdleConnections)
	r := New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), &recordSink{})
	r.PagedList = true
	fc := clock.NewFake(time.Unix(1000, 0))
	r.Clock = fc
	r.Random = func() float64 { return 0 }
	errs := make(chan error, 10)
	r.OnError = func(err error) {
		select {
		case errs <- err:
		default: // a reflector gone wrong must not block on the test
		}
	}
	runPolicyReflector(t, r)
	ctx := policyCtx(t)

	for round := int64(1); round <= 2; round++ {
		var err error
		select {
		case err = <-errs:
		case <-ctx.Done():
			t.Fatalf("round %d: no error reported", round)
		}
		var se *SyncError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, OpWatch, se.Op)
		var de *httpwatch.DecodeError
		require.ErrorAs(t, err, &de, "%v", err)
		assert.Equal(t, "WATCH", de.Verb)
		st := r.Stats()
		assert.Equal(t, round, st.Errors, "Stats().Errors counts the decode error")
		assert.Equal(t, round, st.Lists, "one list per round")
		assert.Equal(t, round, st.Events, "the event before the garbage was received")

		require.NoError(t, fc.WaitForWaiters(ctx, 1), "the reflector backs off before relisting")
		fc.Step(time.Minute)
	}
	require.Eventually(t, func() bool { return listRequests(srv) == 3 }, 10*time.Second, time.Millisecond,
		"a relist follows each decode error")
}

// listRequests counts the list requests srv saw.
func listRequests(srv *apitest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.URL.Query().Get("watch") == "" {
			n++
		}
	}
	return n
}

// conformance 26: cancelling the context while the server still holds a
// list request (the first page, or a later one) makes Run return at once,
// without reporting the cancellation as an error: the request is aborted
// rather than waited for.
func TestReflectorCancelDuringList(t *testing.T) {
	for _, heldPage := range []int{1, 2} {
		t.Run(map[int]string{1: "first page", 2: "second page"}[heldPage], func(t *testing.T) {
			arrived := make(chan struct{})
			release := make(chan struct{})
			var once, arrivedOnce sync.Once
			releaseAll := func() { once.Do(func() { close(release) }) }
			srv := apitest.Serve(t, func(w http.ResponseWriter, req *http.Request) {
				page := 1
				if req.URL.Query().Get("continue") != "" {
					page = 2
				}
				if page == heldPage {
					arrivedOnce.Do(func() { close(arrived) })
					select {
					case <-release:
					case <-req.Context().Done():
					}
					http.Error(w, "released", http.StatusBadRequest) // not retried
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"10","continue":"tok"},"items":[]}`)
			})
			t.Cleanup(releaseAll) // before the server closes: cleanups run last first
			c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1, Timeout: time.Hour})
			require.NoError(t, err)
			t.Cleanup(c.CloseIdleConnections)
			r := New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), &recordSink{})
			r.PagedList = true
			r.Clock = clock.NewFake(time.Unix(1000, 0))
			var errs []error
			var mu sync.Mutex
			r.OnError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
			cancel, done := runPolicyReflector(t, r)

			select {
			case <-arrived:
			case <-time.After(10 * time.Second):
				t.Fatal("the list never reached the server")
			}
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				releaseAll()
				testwait.Recv(t, done, "Run to return once the list is answered")
				t.Fatal("Run waited for the server to answer the list instead of returning on cancel")
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Empty(t, errs, "a cancelled list is not an error")
			assert.Zero(t, r.Stats().Lists)
		})
	}
}

// The reflector hears of the timeout through OnError.
func TestReflectorReportsWatchHeaderTimeout(t *testing.T) {
	// The watch is held without headers where the test sees it arrive:
	// then the client's one header timer is pending. (Waiting for a timer
	// is not enough: while a redirect to a silent server was followed, the
	// timer of the redirected request could be the one stepped.)
	arrived := make(chan struct{}, 1)
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") != "" {
			select {
			case arrived <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		io.WriteString(w, `{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
	})
	clk := clock.NewFake(time.Unix(1000, 0))
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	rc := c.Resource(pods)

	r, sink, _ := newTestReflector(&scriptSource{})
	r.Source = rc
	errc := make(chan error, 1)
	r.OnError = func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	testwait.Recv(t, arrived, "the watch to reach the server")
	require.Equal(t, []string{"replace 0@1"}, sink.log())
	require.Equal(t, 1, clk.Waiters(), "the watch's header timer")
	clk.Step(time.Minute) // the client's WatchHeaderTimeout
	select {
	case err := <-errc:
		var se *SyncError
		require.True(t, errors.As(err, &se))
		require.Equal(t, OpWatchStart, se.Op)
		require.ErrorIs(t, err, httpwatch.ErrResponseHeaderTimeout)
	case <-wctx.Done():
		t.Fatal("no error reported")
	}
}
