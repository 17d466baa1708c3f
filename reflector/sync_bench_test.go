package reflector_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/tidwall/gjson"
)

// benchPod is the recorded pod padded with an annotation to about 4 KB, the
// size of a typical production pod.
func benchPod(b *testing.B) string {
	raw := fixtures.Load(b, "pod-list.json").Body
	item := gjson.GetBytes(raw, "items.0")
	pod := strings.Replace(item.Raw, `"annotations":{`, `"annotations":{"notes":"`+strings.Repeat("x", 2000)+`",`, 1)
	return strings.Replace(pod, `"name":"`+item.Get("metadata.name").String()+`"`, `"name":"%s"`, 1)
}

// BenchmarkReflectorInitialSync lists N pods from watchtest into a
// delta.FIFO through the real client, paged and as a watch-list stream, and
// reports the time per object and the heap the FIFO holds per object.
func BenchmarkReflectorInitialSync(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		s := watchtest.NewServer()
		tmpl := benchPod(b)
		size := 0
		for i := range n {
			raw := fmt.Sprintf(tmpl, fmt.Sprintf("pod-%06d", i))
			size += len(raw)
			if _, err := s.Create(watchtest.Pods, raw); err != nil {
				b.Fatal(err)
			}
		}
		for _, watchList := range []bool{false, true} {
			b.Run(fmt.Sprintf("pods=%d/watchList=%v", n, watchList), func(b *testing.B) {
				c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
				if err != nil {
					b.Fatal(err)
				}
				defer c.CloseIdleConnections()
				var heap float64
				for range b.N {
					b.StopTimer()
					runtime.GC()
					var before runtime.MemStats
					runtime.ReadMemStats(&before)
					fifo := delta.NewFIFO(store.MetaNamespaceKey[*raw.Object])
					r := reflector.New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), fifo)
					r.PagedList = !watchList
					ctx, cancel := context.WithCancel(context.Background())
					done := make(chan struct{})
					b.StartTimer()
					go func() { r.Run(ctx); close(done) }()
					for fifo.Len() < n {
						runtime.Gosched()
					}
					b.StopTimer()
					cancel()
					<-done
					runtime.GC()
					var after runtime.MemStats
					runtime.ReadMemStats(&after)
					heap = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
					runtime.KeepAlive(fifo)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/obj")
				b.ReportMetric(heap, "heapB/obj")
				b.ReportMetric(float64(size)/float64(n), "jsonB/obj")
			})
		}
		s.Close()
	}
}
