package listwatch

import (
	"context"
	"errors"
	"fmt"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/watchtest"
)

// runInBackground runs inf until the test ends, without waiting for a sync.
func runInBackground(t *testing.T, inf *Informer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Error("the informer did not stop")
		}
	})
}

// deadURL is the URL of a port that refuses connections.
func deadURL(t *testing.T) string { return apitest.Refused(t) }

const secretToken = "sekret-token-4f2a9"

// loudInformer returns an informer of pods at url, authenticated with
// secretToken, retrying every millisecond and logging to the returned log.
func loudInformer(t *testing.T, url, fieldSelector string) (*Informer, *testlog.Log) {
	t.Helper()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: url, QPS: -1, BearerToken: secretToken})
	require.NoError(t, err)
	c.RetryMax = 0
	t.Cleanup(c.CloseIdleConnections)
	inf := NewInformer(c.Resource(podsRes), 0, Selector{Field: fieldSelector})
	inf.Reflector.Name = "pods"
	inf.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: time.Millisecond}
	log := &testlog.Log{}
	inf.Logger = slog.New(log)
	return inf, log
}

// decision 20, decision 21: a misconfigured informer says what is wrong in
// one line, at Error with what to do when it will not fix itself, however
// often it retries; the waits return the reason, errors.As-able to the
// SyncError and the StatusError; nothing secret is in either.
func TestInformerFailuresAreLoudAndReturned(t *testing.T) {
	status := func(name string) string {
		return apitest.Serve(t, fixtures.Load(t, name).ServeHTTP).URL
	}
	fieldLabel := apitest.Serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",`+
			`"message":"field label not supported: spec.nodeNam","reason":"BadRequest","code":400}`)
	}).URL
	for _, tc := range []struct {
		name      string
		url       string
		field     string
		permanent bool
		line      string
		contains  []string
		is        func(error) bool
	}{
		{"dead URL", deadURL(t), "", false, "WARN reflector: watch-list failed",
			[]string{"resource=pods", "verb=WATCH", "path=/api/v1/pods", "connection refused", "hint=check the server address"},
			func(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }},
		{"401", status("unauthorized.json"), "", true, "ERROR reflector: list failed",
			[]string{"verb=GET", "path=/api/v1/pods", "code=401", "message=Unauthorized", "hint=check the credentials"},
			httpwatch.IsUnauthorized},
		{"403 on the resource", status("forbidden.json"), "", true, "ERROR reflector: list failed",
			[]string{"verb=GET", "path=/api/v1/pods", `User "nobody" cannot list`, "hint=check RBAC: grant list on pods at cluster scope"},
			httpwatch.IsForbidden},
		{"400 unsupported field label", fieldLabel, "spec.nodeNam=n1", true, "ERROR reflector: list failed",
			[]string{"verb=GET", "message=field label not supported: spec.nodeNam", `hint=check the field selector "spec.nodeNam=n1"`},
			func(err error) bool { se, ok := asStatusErr(err); return ok && se.Code == 400 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inf, log := loudInformer(t, tc.url, tc.field)
			runInBackground(t, inf)
			// The short waits below must find the reason in place, however
			// slow the machine: an error is counted before it is reported,
			// so a fourth count means the first was reported.
			require.Eventually(t, func() bool { return inf.Stats().Errors > 3 }, wait, time.Millisecond, "it retried")

			// A permanent error ends the wait at once (decision 37);
			// another waits as long as ctx allows, then gives the reason.
			limit := 300 * time.Millisecond
			if tc.permanent {
				limit = wait
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			err := inf.Wait(ctx)
			require.Error(t, err)
			if tc.permanent {
				assert.NoError(t, ctx.Err(), "returned before the deadline")
				assert.NotErrorIs(t, err, context.DeadlineExceeded)
			} else {
				assert.ErrorIs(t, err, context.DeadlineExceeded)
			}
			checkReason(t, err, tc.is, tc.permanent)
			assert.NotContains(t, err.Error(), secretToken)
			assert.NotContains(t, err.Error(), "\n", "one line")

			lines := log.Above()
			require.Len(t, lines, 1, "one line however many retries: %q", lines)
			assert.True(t, strings.HasPrefix(lines[0], tc.line+" "), lines[0])
			for _, c := range tc.contains {
				assert.Contains(t, lines[0], c)
			}
			assert.NotContains(t, log.All(), secretToken)
			assert.NotContains(t, log.All(), "Bearer")
		})
	}
}

func asStatusErr(err error) (*httpwatch.StatusError, bool) {
	var se *httpwatch.StatusError
	ok := errors.As(err, &se)
	return se, ok
}

func checkReason(t *testing.T, err error, is func(error) bool, permanent bool) {
	t.Helper()
	assert.True(t, is(err), "the predicate sees the reason: %v", err)
	assert.Equal(t, permanent, httpwatch.IsPermanent(err), "%v", err)
	var se *reflector.SyncError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "pods", se.Resource)
	assert.Contains(t, err.Error(), "pods not synced")
}

// decision 21: RBAC granted later heals an informer whose fail-fast wait
// gave up: it went on retrying, and says so once at Info.
func TestInformerHealsAfterPermanentError(t *testing.T) {
	var mu sync.Mutex
	allowed := false
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	gate := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := allowed
		mu.Unlock()
		if !ok {
			fixtures.Load(t, "forbidden.json").ServeHTTP(w, r)
			return
		}
		proxyTo(t, s.URL, w, r)
	})
	inf, log := loudInformer(t, gate.URL, "")
	runInBackground(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.True(t, httpwatch.IsForbidden(inf.Wait(ctx)))

	mu.Lock()
	allowed = true
	mu.Unlock()
	// Wait returns the 403 at once until a retry gets through: a program
	// waiting through a fix calls it again (decision 37).
	require.Eventually(t, func() bool { return inf.Wait(ctx) == nil }, wait, time.Millisecond)
	require.Eventually(t, func() bool { return len(log.Above()) == 2 }, wait, time.Millisecond)
	lines := log.Above()
	assert.True(t, strings.HasPrefix(lines[1], "INFO reflector: recovered after "), lines[1])
	assert.Contains(t, lines[1], "resource=pods failures=")
	assert.NoError(t, inf.Wait(ctx), "synced: nothing to report")
}

// proxyTo forwards r to base, streaming the answer.
func proxyTo(t *testing.T, base string, w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			_, _ = w.Write(buf[:n])
			w.(http.Flusher).Flush()
		}
		if err != nil {
			return
		}
	}
}

// decision 21, decision 37: a Factory's wait returns at once the
// permanent errors of the informers that have one, leaving out those
// synced.
func TestFactoryWaitReturnsReasons(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	f := NewFactory(c)
	f.Logger = slog.New(&testlog.Log{})
	f.Configure = func(_ httpwatch.Resource, inf *Informer) {
		inf.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: time.Millisecond}
	}
	pods := f.ForResource(podsRes)
	none := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "nosuchthings"})
	ctx, cancel := context.WithCancel(context.Background())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx)
	// The short wait below ends at its deadline by design; each informer
	// must have got where it stays before it, however slow the machine.
	long, stop2 := context.WithTimeout(ctx, wait)
	defer stop2()
	require.NoError(t, pods.Wait(long))
	require.Error(t, none.Wait(long))

	err = f.Wait(long)
	require.Error(t, err)
	assert.NoError(t, long.Err(), "returned before the deadline")
	assert.ErrorIs(t, err, discovery.ErrUnknownResource)
	assert.Contains(t, err.Error(), "nosuchthings.v1 not synced")
	assert.NotContains(t, err.Error(), "pods.v1 not synced", "pods synced")
	assert.True(t, httpwatch.IsPermanent(err), "%v", err)
	var se *reflector.SyncError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "nosuchthings.v1", se.Resource)
}

// decision 20: a healthy informer of 10,000 objects, whose watches are
// closed and expire (410, then a relist) and whose objects change, logs
// nothing above Debug.
func TestInformerSteadyStateIsQuiet(t *testing.T) {
	s, pods := watchtestPods(t)
	for i := range 10_000 {
		_, err := s.Create(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":"p%d","namespace":"ns"}}`, i))
		require.NoError(t, err)
	}
	inf := NewInformer(pods, 0)
	inf.Reflector.Name = "pods"
	log := &testlog.Log{}
	inf.Logger = slog.New(log)
	runInBackground(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, inf.Wait(ctx))
	require.Equal(t, 10_000, inf.Stats().Objects)

	for round := range 3 {
		// A change first, so that the watch has had an event when it is
		// closed: a watch the server closes within a second without one
		// is a failure (conformance 21), not a steady state.
		key := fmt.Sprintf("p%d", round)
		_, err := s.Update(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":{"round":"%d"}}}`, key, round))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			o, ok, _ := inf.Indexer().GetByKey("ns/" + key)
			if !ok {
				return false
			}
			v, _ := o.Label("round")
			return v == fmt.Sprint(round)
		}, wait, time.Millisecond)
		s.FailNext(watchtest.Failure{Code: 410, Reason: "Expired", Verbs: []string{"watch"}, InStream: true})
		s.CloseWatches() // a watch restart, and the next watch says 410: a relist
		require.Eventually(t, func() bool { return inf.Stats().Lists >= int64(round+2) }, wait, time.Millisecond)
	}
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"last","namespace":"ns"}}`)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inf.Stats().Objects == 10_001 }, wait, time.Millisecond)
	assert.Empty(t, log.Above())
	assert.Positive(t, inf.Stats().Errors, "the 410s were reported, at Debug")
}

// decision 22: after the first sync each projection path that no cached
// object has is reported once at Warn, and counted in Stats; paths that
// match, and later relists, add nothing.
func TestInformerReportsUnmatchedProjectionPaths(t *testing.T) {
	s, pods := watchtestPods(t)
	for _, p := range []string{projectedPod("a", "web", "Pending"), projectedPod("b", "web", "Running")} {
		_, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	var err error
	pods.Projection, err = raw.NewProjection("status.phse", "status.phase", "metadata.labels.tier")
	require.NoError(t, err)
	inf := NewInformer(pods, 0)
	inf.Reflector.Name = "pods"
	log := &testlog.Log{}
	inf.Logger = slog.New(log)
	runInBackground(t, inf)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, inf.Wait(ctx))
	require.Eventually(t, func() bool { return inf.Stats().UnmatchedPaths == 2 }, wait, time.Millisecond)

	inf.Relist()
	require.Eventually(t, func() bool { return inf.Stats().Lists == 2 }, wait, time.Millisecond)
	_, err = s.Create(watchtest.Pods, projectedPod("c", "web", "Running"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inf.Stats().Objects == 3 }, wait, time.Millisecond)

	lines := log.Above()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], "WARN informer: projection path matches no cached object resource=pods path=status.phse objects=2")
	assert.Contains(t, lines[1], "path=metadata.labels.tier")
	assert.Contains(t, lines[0], "hint=check the path's spelling")
	assert.Equal(t, 2, inf.Stats().UnmatchedPaths)
}
