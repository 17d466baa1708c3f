package httpwatch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// BenchmarkMergePatchRoundTrip is one merge patch over loopback HTTP: the
// request, the server reading it, the answer and the client building the
// Object. The server here answers a fixed configmap, so the figure is the
// client's and the transport's cost.
func BenchmarkMergePatchRoundTrip(b *testing.B) {
	answer := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"settings","namespace":"shop","uid":"6f1c","resourceVersion":"42",` +
		`"labels":{"checked":"true"}},"data":{"replicas":"3","mode":"fast"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	defer srv.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "shop"})
	patch := []byte(`{"metadata":{"labels":{"checked":"true"}}}`)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, patch); err != nil {
			b.Fatal(err)
		}
	}
}
