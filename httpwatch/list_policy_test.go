package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/require"
)

// decision 14: a list is as long as the server makes it. A page may hold
// more items than the limit asked for (a watch cache that ignores limit does
// that), and nothing caps the items of a list: a cap cannot tell a large
// collection from a hostile server, and a cut list would leave a cache that
// disagrees with the server without saying so. Each item stays bounded by
// Client.MaxFrameSize.
func TestListIsNotCappedByItems(t *testing.T) {
	const items = 5000
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "500", r.URL.Query().Get("limit"))
		var b strings.Builder
		b.WriteString(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[`)
		for i := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"metadata":{"name":"p%d","namespace":"ns","resourceVersion":"%d"}}`, i, i+1)
		}
		b.WriteString(`]}`)
		_, _ = w.Write([]byte(b.String()))
	}))
	defer srv.Close()
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL})
	require.NoError(t, err)
	pods := c.Resource(Resource{Version: "v1", Resource: "pods"})

	page, err := ListAll(context.Background(), pods, ListOptions{}, nil)
	require.NoError(t, err)
	require.Len(t, page.Items, items)
	require.Equal(t, "p4999", page.Items[items-1].Name())

	c.MaxFrameSize = 64
	_, err = ListAll(context.Background(), pods, ListOptions{}, nil)
	require.Error(t, err, "an item larger than MaxFrameSize is refused")
}
