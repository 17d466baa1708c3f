package cacheserve

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/watchers"
)

// benchServer serves a Cache filled with n pods of about 1 KiB, synced at
// version n.
func benchServer(b *testing.B, n int) (*Cache, *httptest.Server) {
	b.Helper()
	res, _ := apiserve.BuiltInResource("", "v1", "pods")
	c := NewCache()
	items := make([]*raw.Object, n)
	for i := range items {
		items[i] = benchPod(b, i, int64(i+1))
	}
	if err := c.Replace(items, fmt.Sprint(n)); err != nil {
		b.Fatal(err)
	}
	srv := &Server{Authorize: allowAll, byRes: map[string]*served{resID("", "v1", "pods"): {res: res, cache: c}}}
	hs := httptest.NewServer(srv)
	b.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return c, hs
}

var filler = fmt.Sprintf("%0900d", 0)

func benchPod(b *testing.B, i int, rv int64) *raw.Object {
	o, err := raw.NewObject(fmt.Appendf(nil, `{"metadata":{"name":"pod-%05d","namespace":"ns-%d","resourceVersion":"%d","labels":{"app":"a%d"}},"spec":{"nodeName":"node-a","x":%q}}`, i, i%10, rv, i%7, filler))
	if err != nil {
		b.Fatal(err)
	}
	return o
}

// BenchmarkList10kPods lists 10,000 pods of about 1 KiB from the cache
// over local HTTP, whole and in pages of 500, with and without gzip
// (client-go asks for it; past 128 KiB the answer is compressed).
func BenchmarkList10kPods(b *testing.B) {
	_, hs := benchServer(b, 10_000)
	for _, c := range []struct{ q, enc string }{{"", "identity"}, {"", "gzip"}, {"?limit=500", "identity"}} {
		b.Run("query="+c.q+"/encoding="+c.enc, func(b *testing.B) {
			var bytes int64
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodGet, hs.URL+"/api/v1/pods"+c.q, nil)
				req.Header.Set("Accept-Encoding", c.enc)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				bytes = n
			}
			b.SetBytes(bytes)
		})
	}
}

// BenchmarkSnapshot10kPods builds the sorted snapshot a list at a new
// version pages through, of 10,000 pods in 10 namespaces: what the
// first list after each change pays before writing a byte.
func BenchmarkSnapshot10kPods(b *testing.B) {
	c, _ := benchServer(b, 10_000)
	c.mu.RLock()
	defer c.mu.RUnlock()
	for b.Loop() {
		c.snaps = nil
		c.snapshotAtLocked(c.rv)
	}
}

// BenchmarkWatchFanOut sends each event to 100 local watchers over HTTP;
// one op is one event delivered to all of them (events/s across the
// watchers is 100 × ops/s).
func BenchmarkWatchFanOut(b *testing.B) {
	const n = 100
	c, hs := benchServer(b, 100)
	ws := watchers.Start(b, hs.URL+"/api/v1/pods?watch=1&resourceVersion=100", n, b.N, nil)
	b.ResetTimer()
	for i := range b.N {
		if err := c.Update(benchPod(b, i%100, int64(101+i))); err != nil {
			b.Fatal(err)
		}
	}
	ws.Wait()
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkWatchLatency times the local hop alone: from handing an event
// to the Cache to each of 100 local watchers reading its line over HTTP,
// with events paced at a steady rate rather than in a burst, as a node's
// upstream feeds them. It reports the p50 and p99 over every delivery.
func BenchmarkWatchLatency(b *testing.B) {
	for _, every := range []time.Duration{10 * time.Millisecond, time.Millisecond} {
		b.Run(fmt.Sprintf("every=%s", every), func(b *testing.B) { watchLatency(b, 100, every) })
	}
}

func watchLatency(b *testing.B, n int, every time.Duration) {
	c, hs := benchServer(b, 100)
	sent := make([]atomic.Int64, b.N) // when event i was handed over, in ns
	lat := make([][]time.Duration, n)
	key := []byte(`"resourceVersion":"`)
	ws := watchers.Start(b, hs.URL+"/api/v1/pods?watch=1&resourceVersion=100", n, b.N, func(w int, line []byte) {
		now := time.Now().UnixNano()
		at := bytes.Index(line, key) + len(key)
		rv, _ := strconv.Atoi(string(line[at : at+bytes.IndexByte(line[at:], '"')]))
		lat[w] = append(lat[w], time.Duration(now-sent[rv-101].Load()))
	})
	tick := time.NewTicker(every)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		sent[i].Store(time.Now().UnixNano())
		if err := c.Update(benchPod(b, i%100, int64(101+i))); err != nil {
			b.Fatal(err)
		}
	}
	ws.Wait()
	b.StopTimer()
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds())/1000, "p99-ms")
}
