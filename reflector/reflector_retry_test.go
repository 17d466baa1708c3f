package reflector

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// throttled returns the 429 the client makes of a response carrying
// Retry-After: header, to a list ("GET") or a watch ("WATCH").
func throttled(t *testing.T, verb, header string) *httpwatch.StatusError {
	t.Helper()
	body := `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`
	return statusOf(t, verb, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", header)
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, body)
	})
}

// throttledEvent is a watch ERROR event whose Status says
// retryAfterSeconds: secs, as the client decodes it.
func throttledEvent(t *testing.T, secs string) watchStep {
	t.Helper()
	frame := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":` + secs + `}}}`
	e := eventOf(t, frame)
	require.Equal(t, httpwatch.Error, e.Type)
	return watchStep{ev: e}
}

// Conformance 22 and 23: whatever Retry-After a server sends, from any of the three
// places it can come from, the reflector waits at most its backoff maximum.
func TestReflectorCapsRetryAfter(t *testing.T) {
	for _, secs := range []string{"86400", "9223372037", "99999999999"} {
		for _, tc := range []struct {
			name string
			prep func(t *testing.T, r *Reflector, src *scriptSource) state
			want phase
		}{
			{
				name: "429 on the first list",
				prep: func(_ *testing.T, _ *Reflector, src *scriptSource) state {
					src.pages = append(src.pages, fail(fmt.Errorf("giving up after 5 attempts: %w", throttled(t, "GET", secs))))
					return state{phase: phaseList}
				},
				want: phaseStart, // a new cycle
			},
			{
				name: "429 on watch start",
				prep: func(_ *testing.T, _ *Reflector, src *scriptSource) state {
					src.watches = append(src.watches, watchFail(throttled(t, "WATCH", secs)))
					return at(phaseWatch, synced("5"))
				},
				want: phaseWatch,
			},
			{
				name: "429 on watch-list start",
				prep: func(_ *testing.T, _ *Reflector, src *scriptSource) state {
					src.watches = append(src.watches, watchFail(throttled(t, "WATCH", secs)))
					return state{phase: phaseWatchList}
				},
				want: phaseWatchList,
			},
			{
				name: "ERROR event with retryAfterSeconds",
				prep: func(t *testing.T, _ *Reflector, _ *scriptSource) state {
					return started(streamOf(newWatcher(throttledEvent(t, secs)), synced("5")))
				},
				want: phaseWatch,
			},
		} {
			t.Run(tc.name+" "+secs, func(t *testing.T) {
				src := &scriptSource{}
				r, _, _ := newTestReflector(src)
				from := tc.prep(t, r, src)
				next, wait := r.step(context.Background(), from)
				next.closeWatch()
				assert.Equal(t, tc.want, next.phase)
				assert.Equal(t, 30*time.Second, wait, "capped at the backoff maximum")
			})
		}
	}
}

// Conformance 22: the cap on Retry-After is the reflector's own backoff maximum when it
// has one.
func TestReflectorRetryAfterCapFollowsBackoff(t *testing.T) {
	src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchFail(throttled(t, "WATCH", "86400"))}}
	r, _, _ := newTestReflector(src)
	r.Backoff.Cap = 10 * time.Second
	_, wait := r.step(context.Background(), at(phaseWatch, synced("5")))
	assert.Equal(t, 10*time.Second, wait)
}

// Conformance 22: end to end on the fake clock, a first list refused with
// Retry-After: 86400 is retried once the backoff maximum has passed.
func TestReflectorRunRetriesThrottledListAfterBackoffMax(t *testing.T) {
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){fail(throttled(t, "GET", "86400")), page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(newWatcher())},
	}
	r, sink, c := newTestReflector(src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1), "the refused list waits")
	c.Step(30 * time.Second)
	require.Eventually(t, func() bool { return r.Stats().Watches == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, []string{"replace 1@10"}, sink.log())
}

// Conformance 22: a 429 with Retry-After waits what the server asked, not
// a backoff step already advanced by an earlier failure, and takes no step:
// the failure after it waits the step the 429 found.
func TestReflectorRetryAfterReplacesBackoffStep(t *testing.T) {
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){fail(errInternal), fail(errInternal)},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchFail(throttled(t, "WATCH", "1"))},
	}
	r, _, _ := newTestReflector(src)
	s := synced("5") // the backoff sequence is remembered from step to step
	var waits []time.Duration
	for _, p := range []phase{phaseList, phaseWatch, phaseList} {
		next, wait := r.step(context.Background(), at(p, s))
		waits = append(waits, wait)
		s = next.memory
	}
	assert.Equal(t, []time.Duration{800 * time.Millisecond, time.Second, 1600 * time.Millisecond}, waits)
}

// Conformance 23: InternalError watch ends are retried at
// once while within MaxInternalErrorRetryDuration of the first of their run.
// A quiet minute ends the run, and so does a new list-and-watch cycle: the
// next InternalError opens a fresh window instead of relisting for ever.
func TestReflectorInternalErrorWindowResets(t *testing.T) {
	type tick struct {
		after time.Duration // fake time passed since the previous step
		from  phase         // phaseStream: an ERROR InternalError ends the watch
		want  phase
	}
	for _, tc := range []struct {
		name  string
		steps []tick
	}{
		{
			name: "within the window, then past it",
			steps: []tick{
				{0, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseStart}, // 40 s since the first
			},
		},
		{
			name: "a quiet minute opens a fresh window",
			steps: []tick{
				{0, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{time.Minute, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{15 * time.Second, phaseStream, phaseStart}, // 35 s since the run began
			},
		},
		{
			name: "a new cycle opens a fresh window",
			steps: []tick{
				{0, phaseStream, phaseWatch},
				{40 * time.Second, phaseStream, phaseStart},
				{0, phaseStart, phaseList},
				{5 * time.Second, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, c := newTestReflector(&scriptSource{})
			r.MaxInternalErrorRetryDuration = 30 * time.Second
			m := memory{lastRV: "5", cycled: true} // not resuming from lastRV
			for i, st := range tc.steps {
				c.Step(st.after)
				from := at(st.from, m)
				if st.from == phaseStream {
					from = started(streamOf(newWatcher(errEv(errInternal)), m))
					from.events = 1
				}
				next, _ := r.step(context.Background(), from)
				require.Equal(t, st.want, next.phase, "step %d", i)
				m = next.memory
			}
		})
	}
}
