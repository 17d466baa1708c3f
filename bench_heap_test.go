package listwatch_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/cacheserve"
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
// reports what the synced informer holds per object, by allocation site,
// against the JSON it holds; "served" adds a cacheserve.Cache as the
// informer's Mirror, as a cacheserve.Server does, history empty. Every allocation is sampled and those of the
// server (its stacks pass through watchtest or net/http's server) are left
// out, so that only the client's side counts. With LISTWATCH_HEAPPROFILE
// set to a path it also writes the heap profile, for
// `go tool pprof -sample_index=inuse_space -top -ignore watchtest`.
func BenchmarkInformerHeap(b *testing.B) {
	b.Run("informer", func(b *testing.B) { benchInformerHeap(b, false, 0) })
	b.Run("served", func(b *testing.B) { benchInformerHeap(b, true, 0) })
	// 117 bytes more, the size of internal/fixtures' pod, land in the
	// middle of the next size class (2,048 bytes) where the pods above
	// fill theirs (1,792): the allocator's rounding, which a mix of
	// sizes pays on average, shows.
	b.Run("informer-1892B", func(b *testing.B) { benchInformerHeap(b, false, 117) })
}

// padded is servedBenchPod with an annotation that makes it pad bytes
// longer (pad 0, or at least 24).
func padded(pad int) string {
	if pad == 0 {
		return servedBenchPod
	}
	labels := `"labels":{"app":"a0"}`
	return strings.Replace(servedBenchPod, labels, labels+`,"annotations":{"pad":"`+strings.Repeat("x", pad-24)+`"}`, 1)
}

// benchInformerHeap is BenchmarkInformerHeap, with a cacheserve.Cache
// mirroring the informer if served, as a cacheserve.Server's does, and
// pods pad bytes longer.
func benchInformerHeap(b *testing.B, served bool, pad int) {
	const n, ns = 10000, "servedbench-12345"
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	srv := watchtest.NewServer()
	defer srv.Close()
	pods := httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: ns}
	tmpl := padded(pad)
	for i := range n {
		if _, err := srv.Create(pods, fmt.Sprintf(tmpl, fmt.Sprintf("pod-%05d", i))); err != nil {
			b.Fatal(err)
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	var sites map[string]int64
	var jsonBytes int64
	for range b.N {
		rc := client.Resource(pods)
		rc.KeepManagedFields = true
		inf := listwatch.NewInformer(rc, 0)
		inf.Logger = slog.New(slog.DiscardHandler)
		if served {
			inf.Mirror = cacheserve.NewCache()
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		if err := inf.Wait(ctx); err != nil {
			b.Fatal(err)
		}
		sites = heapBySite(b)
		objs, err := inf.Lister().List("")
		if err != nil {
			b.Fatal(err)
		}
		jsonBytes = 0
		for _, o := range objs {
			jsonBytes += int64(len(o.Raw()))
		}
		if path := os.Getenv("LISTWATCH_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path)
		}
		cancel()
		<-done
	}
	var total int64
	for site, bytes := range sites {
		total += bytes
		b.ReportMetric(float64(bytes)/n, site+"-B/obj")
	}
	b.ReportMetric(float64(jsonBytes)/n, "json-B/obj")
	b.ReportMetric(float64(total)/n, "heap-B/obj")
	b.ReportMetric(float64(total)/float64(jsonBytes), "heap/json")
}

// heapSites name where an allocation was made by a function its stack
// passes through: the first whose frame is anywhere in the stack, else
// the first that matches from the innermost frame out.
var heapSites = []struct {
	site, frame string
	anywhere    bool
}{
	{"server", "/watchtest.", true},
	{"server", "net/http.(*conn).serve", true},
	{"served-cache", "/cacheserve.", true},
	{"object", "strings.(*Builder)", false}, // the one allocation of header, table and JSON
	{"object-box", "raw.(*layout).write", false},
	{"store-key", "store.JoinKey", false},
	{"index", "/indexer.", false},
	{"store-map", "/store.", false},
	{"watch-buffers", "/raw.", false},
}

// heapBySite is the heap in use after a collection, by heapSites; what
// none names is "other". The server's share is left out.
func heapBySite(b *testing.B) map[string]int64 {
	runtime.GC()
	runtime.GC()
	runtime.GC() // the profile is that of the last completed cycle
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, false)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, false); ok {
			recs = recs[:n]
			break
		}
	}
	sites := map[string]int64{}
	for _, r := range recs {
		sites[siteOf(r.Stack())] += r.InUseBytes()
	}
	if sites["object"] == 0 {
		b.Fatal("no allocation of an object found: the sites' frames no longer match")
	}
	delete(sites, "server")
	return sites
}

func siteOf(stack []uintptr) string {
	var names []string
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			break
		}
	}
	for _, s := range heapSites {
		if s.anywhere {
			for _, name := range names {
				if strings.Contains(name, s.frame) {
					return s.site
				}
			}
		}
	}
	for _, name := range names {
		for _, s := range heapSites {
			if strings.Contains(name, s.frame) {
				return s.site
			}
		}
	}
	return "other"
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
