package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransportReadsLarge: the transport's read buffer, through which a
// chunked watch or list body's framing passes, is 64 KB, so that a
// streaming body is read in large pieces, not net/http's 4 KB.
func TestTransportReadsLarge(t *testing.T) {
	tr, _, err := (&Config{Host: "https://example.invalid"}).httpTransport(nil)
	require.NoError(t, err)
	require.GreaterOrEqual(t, tr.ReadBufferSize, 64<<10)
}
