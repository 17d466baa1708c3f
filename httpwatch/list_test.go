package httpwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// The whole path through HTTP, for a list served in chunks.
func TestListOverHTTPChunked(t *testing.T) {
	srv := serveFixture(t, "pod-list.json")
	p, err := newTestClient(t, srv.URL).Resource(pods).ListPage(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.Len(t, p.Items, 3)
	require.Equal(t, "75", p.ResourceVersion)
}
