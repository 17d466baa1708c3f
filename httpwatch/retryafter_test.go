package httpwatch

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/apitest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// maxDuration is the longest Retry-After a StatusError can carry: advice
// beyond it saturates.
const maxDuration = 9223372036 * time.Second

// Conformance 22: a Retry-After header is whole seconds or an HTTP date;
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
			got, ok := parseRetryAfter(tc.in, time.Now())
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
			assert.GreaterOrEqual(t, got, time.Duration(0))
		})
	}
}

// Conformance 23: details.retryAfterSeconds of an ERROR event follows the
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

// An HTTP-date Retry-After is a wait measured on the client's Clock, not
// the real one: both in the StatusError and in the
// retry's backoff.
func TestRetryAfterDateUsesTheClientsClock(t *testing.T) {
	now := time.Date(2015, 10, 21, 7, 28, 0, 0, time.UTC)
	date := now.Add(30 * time.Second).Format(http.TimeFormat)
	srv := apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", date)
		w.WriteHeader(http.StatusTooManyRequests)
	})
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1, Timeout: 10 * time.Second, Clock: clock.NewFake(now)})
	require.NoError(t, err)
	c.RetryMax = 0
	_, err = c.Resource(pods).Get(context.Background(), "p")
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, 30*time.Second, se.RetryAfter)

	resp := &http.Response{Header: http.Header{"Retry-After": {date}}}
	assert.Equal(t, 30*time.Second, c.backoff(time.Millisecond, time.Minute, 0, resp))
}
