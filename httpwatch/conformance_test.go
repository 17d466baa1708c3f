package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// watchBody serves body as a 200 watch response.
func watchBody(t *testing.T, body string) *ResourceClient {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	})
	return newTestClient(t, srv.URL).Resource(pods)
}

// openWatch opens a watch whose context ends after testwait.Timeout, so a
// Next that should have returned fails the test instead of hanging it.
func openWatch(t *testing.T, rc *ResourceClient) Watcher {
	t.Helper()
	w, err := rc.Watch(testwait.Context(t), ListOptions{})
	require.NoError(t, err)
	t.Cleanup(w.Stop)
	return w
}

const podFrame = `{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"5","uid":"u1"}}}`

// conformance 1: a watch answered with anything but 200 is an error built
// from the body, and no events are produced.
func TestConformance1WatchNon200IsStatusError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		check  func(error) bool
		reason string
	}{
		{"recorded 403 Status", 403, string(fixtures.Load(t, "watch-forbidden.json").Body), IsForbidden, "Forbidden"},
		{"410 Status", 410, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}`, IsGone, "Expired"},
		{"500 without a Status", 500, "<html>proxy error</html>", IsInternalError, "InternalError"},
		{"429 without a body", 429, "", IsTooManyRequests, "TooManyRequests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(tc.status)
				io.WriteString(w, tc.body)
			})
			w, err := newTestClient(t, srv.URL).Resource(pods).Watch(context.Background(), ListOptions{})
			require.Nil(t, w)
			var se *StatusError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.status, se.Code)
			require.Equal(t, tc.reason, se.Reason)
			require.Equal(t, "WATCH", se.Verb)
			require.Equal(t, "/api/v1/namespaces/fixtures/pods", se.Path)
			require.Equal(t, "2s", se.RetryAfter.String())
			require.True(t, tc.check(err))
			require.Len(t, srv.Requests(), 1, "a watch is not retried")
		})
	}
}

// conformance 2, decision 38: a watch request that fails before the
// server answered (here it closed the connection) is an error that says
// how, which the reflector resumes from, not client-go's empty stream,
// which its reflector takes for a very short watch and relists after.
func TestConformance2WatchUnansweredIsAnError(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	})
	w, err := newTestClient(t, srv.URL).Resource(pods).Watch(context.Background(), ListOptions{})
	require.Nil(t, w)
	require.True(t, IsProbableEOF(err), "%v", err)
	require.ErrorContains(t, err, "WATCH /api/v1/namespaces/fixtures/pods:", "it says which request")
}

// Not a probable EOF: connection refused is an error the reflector backs
// off on (conformance 22).
func TestWatchConnectionRefused(t *testing.T) {
	w, err := newTestClient(t, apitest.Refused(t)).Resource(pods).Watch(context.Background(), ListOptions{})
	require.Nil(t, w)
	require.True(t, isConnectionRefused(err), "%v", err)
	require.False(t, IsProbableEOF(err))
}

// conformance 3: an event type outside the five ends the stream with an
// error saying so.
func TestConformance3InvalidEventType(t *testing.T) {
	w := openWatch(t, watchBody(t, podFrame+`{"type":"SNAPSHOT","object":{"metadata":{}}}`+podFrame))
	ev, err := w.Next()
	require.NoError(t, err)
	require.Equal(t, Added, ev.Type)
	_, err = w.Next()
	var de *DecodeError
	require.ErrorAs(t, err, &de)
	require.ErrorIs(t, err, errInvalidEventType)
	require.Contains(t, err.Error(), `got invalid watch event type "SNAPSHOT"`)
	require.False(t, IsProbableEOF(err))
	_, again := w.Next()
	require.Equal(t, err, again, "the stream is closed: the error sticks")
}

// conformance 4: a clean end of the body is io.EOF with no event; a body cut
// inside a frame is a probable EOF (client-go closes silently); any other
// decoding failure is a *DecodeError (client-go's synthetic ERROR event).
func TestConformance4EndOfStream(t *testing.T) {
	t.Run("clean EOF", func(t *testing.T) {
		w := openWatch(t, watchBody(t, podFrame+"\n"))
		_, err := w.Next()
		require.NoError(t, err)
		_, err = w.Next()
		require.Equal(t, io.EOF, err)
	})
	t.Run("empty body", func(t *testing.T) {
		_, err := openWatch(t, watchBody(t, "")).Next()
		require.Equal(t, io.EOF, err)
	})
	t.Run("cut inside a frame", func(t *testing.T) {
		w := openWatch(t, watchBody(t, podFrame+podFrame[:40]))
		_, err := w.Next()
		require.NoError(t, err)
		_, err = w.Next()
		require.ErrorIs(t, err, io.ErrUnexpectedEOF)
		require.True(t, IsProbableEOF(err))
		var de *DecodeError
		require.False(t, errors.As(err, &de))
	})
	t.Run("connection reset inside a frame", func(t *testing.T) {
		srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n%s%s", podFrame, podFrame[:30])
			buf.Flush()
			conn.(*net.TCPConn).SetLinger(0) // close with a reset
			conn.Close()
		})
		w := openWatch(t, newTestClient(t, srv.URL).Resource(pods))
		_, err := w.Next()
		require.NoError(t, err)
		_, err = w.Next()
		require.Error(t, err)
		require.True(t, IsProbableEOF(err), "%v", err)
	})
	t.Run("malformed frame", func(t *testing.T) {
		w := openWatch(t, watchBody(t, podFrame+`{"type":"ADDED","object":{"a":1}]`))
		_, err := w.Next()
		require.NoError(t, err)
		_, err = w.Next()
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		require.Equal(t, int64(len(podFrame)), de.Offset)
		require.False(t, IsProbableEOF(err))
	})
	t.Run("object not JSON", func(t *testing.T) {
		frame := `{"type":"MODIFIED","object":{"metadata":{"name":"b"},"spec":{"a" 1}}}`
		w := openWatch(t, watchBody(t, podFrame+"\n"+frame+"\n"+podFrame+"\n"))
		_, err := w.Next()
		require.NoError(t, err)
		_, err = w.Next()
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		require.Equal(t, int64(len(podFrame)+1), de.Offset, "the event's offset")
		require.ErrorContains(t, err, "WATCH /api/v1/namespaces/fixtures/pods: decode response at byte")
		require.ErrorContains(t, err, "event 2: ")
		require.ErrorContains(t, err, "invalid JSON")
		require.False(t, IsProbableEOF(err), "a broken stream is relisted, not resumed")
		_, again := w.Next()
		require.Equal(t, err, again, "one error, then the end")
	})
	t.Run("not an object between frames", func(t *testing.T) {
		w := openWatch(t, watchBody(t, podFrame+`,`+podFrame))
		w.Next()
		_, err := w.Next()
		var de *DecodeError
		require.ErrorAs(t, err, &de)
	})
}

// conformance 5: Stop is idempotent, closes the body, unblocks a waiting
// Next, and no event is delivered after it, even one already read.
func TestConformance5Stop(t *testing.T) {
	closed := make(chan struct{}, 2)
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, podFrame+podFrame) // two frames, one chunk
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then silence until the client goes
		closed <- struct{}{}
	})
	w := openWatch(t, newTestClient(t, srv.URL).Resource(pods))
	_, err := w.Next()
	require.NoError(t, err)
	w.Stop()
	_, err = w.Next()
	require.Equal(t, io.EOF, err, "the buffered second frame is not delivered")
	testwait.Recv(t, closed, "Stop to close the connection")
	w.Stop()

	t.Run("unblocks Next", func(t *testing.T) {
		w := openWatch(t, newTestClient(t, srv.URL).Resource(pods))
		w.Next()
		w.Next()
		done := make(chan error)
		go func() {
			_, err := w.Next()
			done <- err
		}()
		w.Stop()
		require.Equal(t, io.EOF, testwait.Recv(t, done, "Stop to unblock Next"))
	})
}

// conformance 6: an ERROR event carrying a Status becomes a *StatusError;
// any other object becomes an error naming it, the object kept in the event.
func TestConformance6ErrorEvents(t *testing.T) {
	for _, tc := range []struct {
		name, object string
		status       bool
	}{
		{"Status v1", `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Expired","code":410,"message":"too old"}`, true},
		{"Status meta.k8s.io/v1", `{"kind":"Status","apiVersion":"meta.k8s.io/v1","reason":"InternalError","code":500}`, true},
		{"Status of another group", `{"kind":"Status","apiVersion":"example.com/v1","code":500}`, false},
		{"a Pod", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p"}}`, false},
		{"no kind", `{"code":410}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := openWatch(t, watchBody(t, `{"type":"ERROR","object":`+tc.object+`}`))
			ev, err := w.Next()
			require.NoError(t, err)
			require.Equal(t, Error, ev.Type)
			if tc.status {
				var se *StatusError
				require.ErrorAs(t, ev.Err, &se)
				require.Nil(t, ev.Object)
				require.Equal(t, "WATCH", se.Verb)
				return
			}
			var ue *unexpectedObject
			require.ErrorAs(t, ev.Err, &ue)
			require.Equal(t, tc.object, ue.Object.String())
			require.Same(t, ev.Object, ue.Object)
		})
	}
}

// conformance 7: the predicates, as the server's own error helpers define
// them; decision 9: IsGone also covers reason Expired and any 410.
func TestConformance7Predicates(t *testing.T) {
	tooLarge := &StatusError{Code: 504, Reason: "Timeout", Details: StatusDetails{Causes: []StatusCause{{Reason: "ResourceVersionTooLarge"}}}}
	legacyTooLarge := &StatusError{Code: 504, Reason: "Timeout", Message: "Timeout: Too large resource version: 9, current: 3"}
	for _, tc := range []struct {
		name string
		err  *StatusError
		pred func(error) bool
		want bool
	}{
		{"Expired is expired", &StatusError{Code: 410, Reason: "Expired"}, expired, true},
		{"Gone is not expired", &StatusError{Code: 410, Reason: "Gone"}, expired, false},
		{"Expired with another code is expired", &StatusError{Code: 500, Reason: "Expired"}, expired, true},
		{"Expired with another code is gone", &StatusError{Code: 500, Reason: "Expired"}, IsGone, true},
		{"Gone", &StatusError{Code: 410, Reason: "Gone"}, IsGone, true},
		{"410 unknown reason", &StatusError{Code: 410}, IsGone, true},
		{"any 410 is gone", &StatusError{Code: 410, Reason: "Conflict"}, IsGone, true},
		{"Expired is gone here", &StatusError{Code: 410, Reason: "Expired"}, IsGone, true},
		{"500 is not gone", &StatusError{Code: 500}, IsGone, false},
		{"TooManyRequests", &StatusError{Code: 503, Reason: "TooManyRequests"}, IsTooManyRequests, true},
		{"429 whatever the reason", &StatusError{Code: 429, Reason: "Other"}, IsTooManyRequests, true},
		{"503 is not 429", &StatusError{Code: 503}, IsTooManyRequests, false},
		{"InternalError", &StatusError{Code: 503, Reason: "InternalError"}, IsInternalError, true},
		{"500 unknown reason", &StatusError{Code: 500}, IsInternalError, true},
		{"500 with another reason", &StatusError{Code: 500, Reason: "Timeout"}, IsInternalError, false},
		{"NotFound", &StatusError{Code: 404, Reason: "NotFound"}, IsNotFound, true},
		{"404 unknown reason", &StatusError{Code: 404}, IsNotFound, true},
		{"404 with another reason", &StatusError{Code: 404, Reason: "Other"}, IsNotFound, false},
		{"Conflict", &StatusError{Code: 409, Reason: "Conflict"}, IsConflict, true},
		{"AlreadyExists is not a conflict", &StatusError{Code: 409, Reason: "AlreadyExists"}, IsConflict, false},
		{"Forbidden", &StatusError{Code: 403, Reason: "Forbidden"}, IsForbidden, true},
		{"Unauthorized", &StatusError{Code: 401}, IsUnauthorized, true},
		{"too large RV cause", tooLarge, IsResourceVersionTooLarge, true},
		{"too large RV, legacy message", legacyTooLarge, IsResourceVersionTooLarge, true},
		{"plain timeout", &StatusError{Code: 504, Reason: "Timeout", Message: "slow"}, IsResourceVersionTooLarge, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.pred(tc.err))
			wrapped := fmt.Errorf("list pods: %w", fmt.Errorf("page 2: %w", tc.err))
			require.Equal(t, tc.want, tc.pred(wrapped), "through %%w")
		})
	}
	require.False(t, IsGone(errors.New("410")))
	require.False(t, IsGone(nil))

	// The recorded too-large-RV response is recognised.
	fx := fixtures.Load(t, "list-rv-too-large.json")
	se := statusFromBody("GET", "/api/v1/pods", fx.Status, http.Header{"Retry-After": {"1"}}, fx.Body, time.Now())
	require.True(t, IsResourceVersionTooLarge(se))
	require.Equal(t, "GET /api/v1/pods: 504 Timeout: Timeout: Too large resource version: 1000212, current: 212", se.Error())
}

// Cancelling the watch's context ends a blocked Next with an error that
// says so (the reflector is shutting down, nothing to resume).
func TestWatchContextCancel(t *testing.T) {
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, podFrame)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	w, err := newTestClient(t, srv.URL).Resource(pods).Watch(ctx, ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	_, err = w.Next()
	require.NoError(t, err)
	done := make(chan error)
	go func() {
		_, err := w.Next()
		done <- err
	}()
	cancel()
	err = testwait.Recv(t, done, "cancel to end the blocked Next")
	require.ErrorIs(t, err, context.Canceled)
}

func TestIsProbableEOF(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{io.EOF, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "read", Err: errors.New("connection reset by peer")}, true},
		{errors.New("http2: server sent GOAWAY and closed the connection; LastStreamID=1"), true},
		{errors.New("stream error: stream ID 3; INTERNAL_ERROR"), true},
		{&StatusError{Code: 500}, false},
		{&DecodeError{Err: errInvalidEventType}, false},
		{nil, false},
	} {
		require.Equal(t, tc.want, IsProbableEOF(tc.err), "%v", tc.err)
	}
}

func TestStatusErrorText(t *testing.T) {
	require.Equal(t, "409 Conflict: busy", (&StatusError{Code: 409, Reason: "Conflict", Message: "busy"}).Error())
	require.Equal(t, "PUT /api/v1/x: 500 error", (&StatusError{Code: 500, Verb: "PUT", Path: "/api/v1/x"}).Error())
	se := statusFromBody("GET", "/p", 503, http.Header{"Retry-After": {"7"}}, []byte("  upstream down\n"), time.Now())
	require.Equal(t, "GET /p: 503 ServiceUnavailable: upstream down", se.Error())
	require.Equal(t, "7s", se.RetryAfter.String())
}
