package httpwatch

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/kubeconfig"
)

// chunked hands out r in reads of at most n bytes, as a network does.
type chunked struct {
	r io.Reader
	n int
}

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
func (chunked) Close() error                 { return nil }

// What the watchdog (decision 36) costs a watch that streams: events read
// in 4 KiB network reads, with no bound, and with the reflector's.
func BenchmarkWatchWatchdog(b *testing.B) {
	const events = 1000
	stream := strings.Repeat(addedPod, events)
	for _, bc := range []struct {
		name string
		idle time.Duration
	}{{"off", -1}, {"on", 150 * time.Second}} {
		b.Run(bc.name, func(b *testing.B) {
			c, err := NewClient(&kubeconfig.Config{Host: "http://server.invalid", QPS: -1})
			if err != nil {
				b.Fatal(err)
			}
			opts := ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: 300, IdleTimeout: bc.idle}
			d := c.Resource(Resource{Version: "v1", Resource: "pods"}).decoder()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				w := newWatch(c, chunked{strings.NewReader(stream), 4 << 10}, func() {}, "/api/v1/pods", d, opts)
				for {
					if _, err := w.Next(); err != nil {
						break
					}
				}
				w.Stop()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*events), "ns/event")
		})
	}
}
