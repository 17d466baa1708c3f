package httpwatch_test

import (
	"context"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// BenchmarkMergePatchRoundTrip is one merge patch over loopback HTTP on
// watchtest: the request, the server applying the patch, storing a new
// version and answering, and the client building the Object. Each patch
// changes a label, so every one is a real write.
func BenchmarkMergePatchRoundTrip(b *testing.B) {
	server := watchtest.NewServer()
	defer server.Close()
	if _, err := server.Create(watchtest.ConfigMaps, `{"metadata":{"name":"settings","namespace":"shop","labels":{"app":"web"}},"data":{"replicas":"3","mode":"fast"}}`); err != nil {
		b.Fatal(err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "shop"})
	patches := [2][]byte{[]byte(`{"metadata":{"labels":{"checked":"true"}}}`), []byte(`{"metadata":{"labels":{"checked":"false"}}}`)}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, patches[i%2]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
