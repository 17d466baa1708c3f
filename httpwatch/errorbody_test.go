package httpwatch

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/testkit/stackuse"
	"github.com/stretchr/testify/require"
)

// TestErrorBodyDeepNesting: an error response of 1 MiB of '[' (the most
// the client reads) is reported as text without growing a stack per level:
// it took 128 MB of stack when the body was validated recursively.
func TestErrorBodyDeepNesting(t *testing.T) {
	for _, body := range []string{
		strings.Repeat("[", redact.BodyLimit),
		strings.Repeat(`{"a":`, redact.BodyLimit/5),
		strings.Repeat("[", redact.BodyLimit/2) + strings.Repeat("]", redact.BodyLimit/2),
	} {
		var se *StatusError
		grown := stackuse.Growth(func() {
			se = statusFromBody("GET", "/p", 500, http.Header{}, []byte(body), time.Now())
		})
		require.Less(t, grown, uint64(1<<20), "stack grew by %d bytes for a body starting %.10q", grown, body)
		require.Equal(t, 500, se.Code)
		require.Equal(t, "InternalError", se.Reason)
		require.Equal(t, body[:512]+"...", se.Message)
	}
}

// TestStatusFromBody: a Status body is the error as the server wrote it,
// the response's code standing in only for a code the Status lacks; any
// other body is its text, cut after 512 bytes, or the code's own text.
func TestStatusFromBody(t *testing.T) {
	text512 := strings.Repeat("x", 512)
	for _, c := range []struct {
		name       string
		code       int
		body       string
		wantCode   int
		wantReason string
		wantMsg    string
	}{
		{"a Status without a code", 500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":"InternalError"}`, 500, "InternalError", "m"},
		{"a Status's own code wins", 500, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"m","reason":"Conflict","code":409}`, 409, "Conflict", "m"},
		{"text of 512 bytes, whole", 503, text512, 503, "ServiceUnavailable", text512},
		{"text of 513 bytes, cut", 503, text512 + "y", 503, "ServiceUnavailable", text512 + "..."},
		{"no body", 404, "", 404, "NotFound", "Not Found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			se := statusFromBody("GET", "/p", c.code, http.Header{}, []byte(c.body), time.Now())
			require.Equal(t, c.wantCode, se.Code)
			require.Equal(t, c.wantReason, se.Reason)
			require.Equal(t, c.wantMsg, se.Message)
		})
	}
}
