package httpwatch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/require"
)

// TestProjectionMetadataOnly: a projection composes with metadata-only
// mode: the PartialObjectMetadata the server sends is cut as well.
func TestProjectionMetadataOnly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "as=PartialObjectMetadataList") {
			http.Error(w, "metadata only, please", http.StatusNotAcceptable)
			return
		}
		_, _ = io.WriteString(w, `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"9"},"items":[`+
			`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"7",`+
			`"labels":{"x":"y"},"annotations":{"big":"..."},"managedFields":[{}]}}]}`)
	}))
	defer srv.Close()
	c, err := NewClient(&kubeconfig.Config{Host: srv.URL})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	rc := c.Resource(Resource{Version: "v1", Resource: "pods"})
	rc.MetadataOnly = true
	rc.Projection, err = raw.NewProjection("metadata.labels")
	require.NoError(t, err)
	page, err := rc.ListPage(context.Background(), ListOptions{})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	require.Equal(t, `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","namespace":"ns","resourceVersion":"7","labels":{"x":"y"}}}`,
		page.Items[0].String())
}
