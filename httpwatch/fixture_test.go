package httpwatch

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/listwatch/listwatch/internal/apitest"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
)

func serveFixture(t testing.TB, name string) *apitest.Server {
	fx := fixtures.Load(t, name)
	return apitest.Serve(t, func(w http.ResponseWriter, r *http.Request) { fx.ServeHTTP(w, nil) })
}

// newTestClient returns a client for srv with fast retries and no rate
// limit.
func newTestClient(t testing.TB, url string) *Client {
	t.Helper()
	c, err := NewClient(&kubeconfig.Config{Host: url, QPS: -1, Timeout: 10 * time.Second})
	require.NoError(t, err)
	c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
	return c
}

var pods = Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"}

// chunkReader returns its chunks one Read at a time, as a network would.
type chunkReader struct {
	chunks [][]byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.chunks) > 0 && len(c.chunks[0]) == 0 {
		c.chunks = c.chunks[1:]
	}
	if len(c.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.chunks[0])
	c.chunks[0] = c.chunks[0][n:]
	return n, nil
}

func (c *chunkReader) Close() error { return nil }

// splitAt cuts b into pieces at the given offsets (ascending).
func splitAt(b []byte, offsets ...int) [][]byte {
	var out [][]byte
	prev := 0
	for _, o := range offsets {
		out = append(out, b[prev:o])
		prev = o
	}
	return append(out, b[prev:])
}
