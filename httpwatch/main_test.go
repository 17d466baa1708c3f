package httpwatch

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The real-API test talks HTTP/2 over TLS; a connection's reader
		// goroutine lives until the transport closes it, and the bearer
		// wrapper of the config in this branch does not pass
		// CloseIdleConnections through.
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"),
	)
}
