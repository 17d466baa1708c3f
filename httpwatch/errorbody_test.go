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
