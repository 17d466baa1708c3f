package listwatch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// servedBenchPod is a pod as kube-apiserver 1.37.2 lists one of
// bench/cmd/servedbench's (its namespace, its manager), managedFields kept,
// with a placeholder name: 1,774 bytes once the list scanner has added
// kind and apiVersion, the size docs/bench.md's memory row measured.
const servedBenchPod = `{"metadata":{"name":"%s","namespace":"servedbench-12345","uid":"2ae1f5ed-bba6-4c3d-aa83-fafab3685e8c","resourceVersion":"73","generation":1,"creationTimestamp":"2026-12-08T00:12:19Z","labels":{"app":"a0"},"managedFields":[{"manager":"Go-http-client","operation":"Update","apiVersion":"v1","time":"2026-12-08T00:12:19Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"MODE\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:nodeName":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}]},"spec":{"containers":[{"name":"main","image":"registry.example/app:1.0","args":["--serve","--port=8080"],"env":[{"name":"MODE","value":"bench"}],"resources":{"requests":{"cpu":"10m","memory":"16Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","nodeName":"node-0","securityContext":{},"schedulerName":"default-scheduler","tolerations":[{"key":"node.kubernetes.io/not-ready","operator":"Exists","effect":"NoExecute","tolerationSeconds":300},{"key":"node.kubernetes.io/unreachable","operator":"Exists","effect":"NoExecute","tolerationSeconds":300}],"priority":0,"enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority"},"status":{"phase":"Pending","qosClass":"Burstable"}}`

// BenchmarkInformerHeap syncs 10,000 such pods over HTTP from a watchtest
// server, as the served cache's informer does (KeepManagedFields), and
// reports the heap the synced informer holds against the JSON it holds.
// With LISTWATCH_HEAPPROFILE set to a path it also writes a heap profile
// taken after the sync, every allocation sampled, for
// `go tool pprof -sample_index=inuse_space -top` (the server's own
// allocations, under watchtest, are in it too: ignore them).
func BenchmarkInformerHeap(b *testing.B) {
	const n, ns = 10000, "servedbench-12345"
	if path := os.Getenv("LISTWATCH_HEAPPROFILE"); path != "" {
		old := runtime.MemProfileRate
		runtime.MemProfileRate = 1
		defer func() { runtime.MemProfileRate = old }()
	}
	srv := watchtest.NewServer()
	defer srv.Close()
	pods := httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: ns}
	for i := range n {
		if _, err := srv.Create(pods, fmt.Sprintf(servedBenchPod, fmt.Sprintf("pod-%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	var perObject, jsonBytes float64
	for range b.N {
		rc := client.Resource(pods)
		rc.KeepManagedFields = true
		base := heapInUse()
		inf := NewInformer(rc, 0)
		inf.Logger = slog.New(slog.DiscardHandler)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		if err := inf.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		perObject = float64(heapInUse()-base) / n
		jsonBytes = 0
		objs, err := inf.Lister().List("")
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range objs {
			jsonBytes += float64(len(o.Raw()))
		}
		jsonBytes /= n
		if path := os.Getenv("LISTWATCH_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path)
		}
		cancel()
		<-done
	}
	b.ReportMetric(perObject, "heapB/obj")
	b.ReportMetric(jsonBytes, "jsonB/obj")
	b.ReportMetric(perObject/jsonBytes, "heap/json")
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}
