package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxDuration is the longest Retry-After a StatusError can carry: advice
// beyond it saturates.
const maxDuration = 9223372036 * time.Second

// Issue 16 item 3: a Retry-After header is whole seconds or an HTTP date;
// huge counts saturate instead of overflowing, anything else is ignored.
func TestParseRetryAfterNeverOverflows(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"1", time.Second, true},
		{"86400", 24 * time.Hour, true},
		{"9223372036", maxDuration, true},
		{"9223372037", maxDuration, true},                 // overflowed to a negative wait
		{"99999999999", maxDuration, true},                // overflowed to 2 million hours
		{"99999999999999999999999999", maxDuration, true}, // beyond int64
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"soon", 0, false},
		{"Wed, 21 Oct 2015 07:28:00 GMT", 0, true}, // a date in the past: retry now
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, ok := parseRetryAfter(tc.in)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
			assert.GreaterOrEqual(t, got, time.Duration(0))
		})
	}
}

// Issue 16 item 3: details.retryAfterSeconds of an ERROR event follows the
// same rules as the header.
func TestRetryAfterSecondsInStatusNeverOverflows(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{`2`, 2 * time.Second},
		{`86400`, 24 * time.Hour},
		{`9223372037`, maxDuration},
		{`99999999999`, maxDuration},
		{`1e300`, maxDuration},
		{`-3`, 0},
		{`"7"`, 0},
	} {
		t.Run(tc.in, func(t *testing.T) {
			se := statusFromJSON(`{"kind":"Status","apiVersion":"v1","code":429,"details":{"retryAfterSeconds":` + tc.in + `}}`)
			assert.Equal(t, tc.want, se.RetryAfter)
		})
	}
}

// throttled returns a 429 as the client builds it from a response carrying
// Retry-After: header.
func throttled(verb, header string) *StatusError {
	body := []byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429}`)
	return statusFromBody(verb, "/api/v1/pods", http.StatusTooManyRequests, http.Header{"Retry-After": {header}}, body)
}

// throttledEvent decodes a watch ERROR event whose Status says
// retryAfterSeconds: secs.
func throttledEvent(t *testing.T, secs string) watchStep {
	t.Helper()
	frame := `{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"TooManyRequests","code":429,"details":{"retryAfterSeconds":` + secs + `}}}`
	rd := newReader(strings.NewReader(frame), 0, false)
	raw, err := rd.container()
	require.NoError(t, err)
	e, err := decodeEvent(raw, &rd.sc, &scanOptions{})
	require.NoError(t, err)
	require.Equal(t, Error, e.Type)
	return watchStep{ev: e}
}

// Issue 16 item 3: whatever Retry-After a server sends, from any of the three
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
					src.pages = append(src.pages, fail(fmt.Errorf("giving up after 5 attempts: %w", throttled("GET", secs))))
					return state{phase: phaseList}
				},
				want: phaseStart, // a new cycle
			},
			{
				name: "429 on watch start",
				prep: func(_ *testing.T, r *Reflector, src *scriptSource) state {
					r.lastRV = "5"
					src.watches = append(src.watches, watchFail(throttled("WATCH", secs)))
					return state{phase: phaseWatch}
				},
				want: phaseWatch,
			},
			{
				name: "429 on watch-list start",
				prep: func(_ *testing.T, _ *Reflector, src *scriptSource) state {
					src.watches = append(src.watches, watchFail(throttled("WATCH", secs)))
					return state{phase: phaseWatchList}
				},
				want: phaseWatchList,
			},
			{
				name: "ERROR event with retryAfterSeconds",
				prep: func(t *testing.T, r *Reflector, _ *scriptSource) state {
					r.lastRV = "5"
					return streamOf(newWatcher(throttledEvent(t, secs)))
				},
				want: phaseWatch,
			},
		} {
			t.Run(tc.name+" "+secs, func(t *testing.T) {
				src := &scriptSource{}
				r, _, _ := newTestReflector(src)
				from := tc.prep(t, r, src)
				next, wait := r.step(context.Background(), from)
				assert.Equal(t, tc.want, next.phase)
				assert.Equal(t, 30*time.Second, wait, "capped at the backoff maximum")
			})
		}
	}
}

// Issue 16 item 3: the cap is the reflector's own backoff maximum when it
// has one.
func TestReflectorRetryAfterCapFollowsBackoff(t *testing.T) {
	src := &scriptSource{watches: []func(ListOptions) (Watcher, error){watchFail(throttled("WATCH", "86400"))}}
	r, _, _ := newTestReflector(src)
	r.Backoff.Cap = 10 * time.Second
	r.lastRV = "5"
	_, wait := r.step(context.Background(), state{phase: phaseWatch})
	assert.Equal(t, 10*time.Second, wait)
}

// Issue 16 item 3: end to end on the fake clock, a first list refused with
// Retry-After: 86400 is retried once the backoff maximum has passed.
func TestReflectorRunRetriesThrottledListAfterBackoffMax(t *testing.T) {
	src := &scriptSource{
		pages:   []func(ListOptions) (*Page, error){fail(throttled("GET", "86400")), page("10", "", obj("a", "10"))},
		watches: []func(ListOptions) (Watcher, error){watchOf(newWatcher())},
	}
	r, sink, c := newTestReflector(src)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	require.NoError(t, c.WaitForWaiters(wctx, 1), "the refused list waits")
	c.Step(30 * time.Second)
	require.Eventually(t, func() bool { return r.Stats().Watches == 1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, []string{"replace 1@10"}, sink.log())
}

// Issue 16 item 13: a 429 with Retry-After waits what the server asked, not
// a backoff step already advanced by an earlier failure, and takes no step:
// the failure after it waits the step the 429 found.
func TestReflectorRetryAfterReplacesBackoffStep(t *testing.T) {
	src := &scriptSource{
		pages:   []func(ListOptions) (*Page, error){fail(errInternal), fail(errInternal)},
		watches: []func(ListOptions) (Watcher, error){watchFail(throttled("WATCH", "1"))},
	}
	r, _, _ := newTestReflector(src)
	r.lastRV = "5"
	var waits []time.Duration
	for _, p := range []phase{phaseList, phaseWatch, phaseList} {
		_, wait := r.step(context.Background(), state{phase: p})
		waits = append(waits, wait)
	}
	assert.Equal(t, []time.Duration{800 * time.Millisecond, time.Second, 1600 * time.Millisecond}, waits)
}

// Issue 16 item 15, conformance 23: InternalError watch ends are retried at
// once while within MaxInternalErrorRetryDuration of the first of their run.
// A quiet minute ends the run, and so does a new list-and-watch cycle: the
// next InternalError opens a fresh window instead of relisting for ever.
func TestReflectorInternalErrorWindowResets(t *testing.T) {
	type at struct {
		after time.Duration // fake time passed since the previous step
		from  phase         // phaseStream: an ERROR InternalError ends the watch
		want  phase
	}
	for _, tc := range []struct {
		name  string
		steps []at
	}{
		{
			name: "within the window, then past it",
			steps: []at{
				{0, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseStart}, // 40 s since the first
			},
		},
		{
			name: "a quiet minute opens a fresh window",
			steps: []at{
				{0, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{time.Minute, phaseStream, phaseWatch},
				{20 * time.Second, phaseStream, phaseWatch},
				{15 * time.Second, phaseStream, phaseStart}, // 35 s since the run began
			},
		},
		{
			name: "a new cycle opens a fresh window",
			steps: []at{
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
			r.lastRV = "5"
			r.cycled = true // not resuming from lastRV
			r.MaxInternalErrorRetryDuration = 30 * time.Second
			for i, st := range tc.steps {
				c.Step(st.after)
				from := state{phase: st.from}
				if st.from == phaseStream {
					from = streamOf(newWatcher(errEv(errInternal)))
					from.events = 1
				}
				next, _ := r.step(context.Background(), from)
				require.Equal(t, st.want, next.phase, "step %d", i)
			}
		})
	}
}
