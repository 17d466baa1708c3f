package listwatch

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/watchtest"
)

// countingBody counts the bytes a client reads from the server.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
}

func (c countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil {
		resp.Body = countingBody{resp.Body, c.n}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// BenchmarkWarmStart restarts an informer of 10,000 real pods (about
// 3.9 KB each on the wire) on a watchtest server: cold, by a list; warm,
// from a snapshot (decision 32). ns/op is the time to first-ready: synced
// for cold, the snapshot in the cache and its adds handed to the handler
// for warm, whose "synced-ms" adds the wait for the resumed watch's first
// event (a bookmark the server sends as soon as the watch is open). Bytes
// are those the server sent.
func BenchmarkWarmStart(b *testing.B) {
	const n = 10000
	s := watchtest.NewServer()
	defer s.Close()
	tmpl := fixturePod(b)
	for i := range n {
		raw := fmt.Sprintf(tmpl, fmt.Sprintf("pod-%06d", i))
		if _, err := s.Create(watchtest.Pods, raw); err != nil {
			b.Fatal(err)
		}
	}
	var read atomic.Int64
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1,
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper { return countingTransport{rt, &read} }})
	if err != nil {
		b.Fatal(err)
	}
	defer client.CloseIdleConnections()
	dir := b.TempDir()
	start := func(warm bool) (*Informer, func()) {
		inf := NewInformer(client.Resource(podsRes), 0)
		inf.Logger = slog.New(slog.DiscardHandler)
		if warm {
			inf.Snapshot = snapshot.Options{Dir: dir}
		}
		_, _ = inf.AddEventHandler(HandlerFuncs{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		return inf, func() { cancel(); <-done }
	}
	// The snapshot the warm runs start from.
	inf, stop := start(true)
	<-inf.warm.synced
	stop() // saves the snapshot: Run publishes the list's version before it returns

	for _, warm := range []bool{false, true} {
		b.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(b *testing.B) {
			var bytes int64
			var synced time.Duration
			for range b.N {
				read.Store(0)
				t0 := time.Now()
				inf, stop := start(warm)
				if warm {
					<-inf.warm.loaded
					b.StopTimer()
					_ = s.WaitForWatches(context.Background(), 1)
					s.SendBookmarks()
				}
				<-inf.warm.synced
				synced += time.Since(t0)
				b.StopTimer()
				bytes += read.Load()
				stop()
				b.StartTimer()
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "served-B/op")
			b.ReportMetric(float64(synced.Milliseconds())/float64(b.N), "synced-ms")
		})
	}
}
