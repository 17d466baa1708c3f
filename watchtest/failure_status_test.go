package watchtest_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// An injected Failure that gives only a reason or only a message gets the
// other from its code's default, as one that gives neither does; and only
// a Failure with RetryAfter sends a Retry-After header.
func TestFailurePartsDefaultSeparately(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name                string
		failure             watchtest.Failure
		reason, message     string
		retryAfter          string
		retryAfterInDetails bool
	}{
		{"neither", watchtest.Failure{Code: http.StatusServiceUnavailable},
			"ServiceUnavailable", "The server is currently unable to handle the request", "", false},
		{"message only", watchtest.Failure{Code: http.StatusServiceUnavailable, Message: "draining"},
			"ServiceUnavailable", "draining", "", false},
		{"reason only", watchtest.Failure{Code: http.StatusInternalServerError, Reason: "Custom"},
			"Custom", "Internal error occurred: injected by watchtest", "", false},
		{"both", watchtest.Failure{Code: http.StatusInternalServerError, Reason: "Custom", Message: "boom"},
			"Custom", "boom", "", false},
		{"retry after", watchtest.Failure{Code: http.StatusTooManyRequests, RetryAfter: time.Second},
			"TooManyRequests", "Too many requests, please try again later.", "1", true},
	}
	for _, tt := range tests {
		s.FailNext(tt.failure)
		code, body, h := do(t, s, http.MethodGet, "/api/v1/pods", "")
		require.Equal(t, tt.failure.Code, code, tt.name)
		assert.Equal(t, tt.reason, gjson.GetBytes(body, "reason").String(), tt.name)
		assert.Equal(t, tt.message, gjson.GetBytes(body, "message").String(), tt.name)
		assert.Equal(t, tt.retryAfter, h.Get("Retry-After"), tt.name)
		_, present := h["Retry-After"]
		assert.Equal(t, tt.retryAfter != "", present, tt.name)
		assert.Equal(t, tt.retryAfterInDetails, gjson.GetBytes(body, "details.retryAfterSeconds").Exists(), tt.name)
	}
}

// The server's own errors carry no Retry-After: nothing tells a client to
// wait before it retries a missing object or a bad request.
func TestErrorsWithoutRetryAfterSendNoHeader(t *testing.T) {
	s := newServer(t)
	for _, path := range []string{"/api/v1/namespaces/prod/pods/missing", "/api/v1/pods?labelSelector=a%20in"} {
		code, body, h := do(t, s, http.MethodGet, path, "")
		require.GreaterOrEqual(t, code, 400, "%s: %s", path, body)
		_, present := h["Retry-After"]
		assert.False(t, present, "%s: %v", path, h)
	}
}
