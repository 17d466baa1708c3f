package processor_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/processor"
)

type object struct{ name string }

// BenchmarkDistribute measures notifications from Distribute through to
// handlers that do nothing: the processor's own cost per event. With
// batch=20 they are posted and flushed every 20 (Post, Flush), as an
// informer does once per read of its watch: a waiting handler is woken
// once per batch.
func BenchmarkDistribute(b *testing.B) {
	for _, bc := range []struct{ handlers, batch int }{{1, 1}, {10, 1}, {1, 20}, {10, 20}} {
		handlers, batch := bc.handlers, bc.batch
		b.Run(fmt.Sprintf("handlers=%d/batch=%d", handlers, batch), func(b *testing.B) {
			p := processor.New[*object]()
			var all sync.WaitGroup
			all.Add(handlers)
			for range handlers {
				var seen atomic.Int64
				_, err := p.AddHandler(processor.HandlerFuncs[*object]{UpdateFunc: func(_, _ *object) {
					if seen.Add(1) == int64(b.N) {
						all.Done()
					}
				}}, 0, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() {
				defer close(stopped)
				p.Run(ctx)
			}()
			obj := &object{name: "pod"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				n := processor.Updated(obj, obj, false)
				if batch == 1 {
					p.Distribute(n)
					continue
				}
				p.Post(n)
				if i%batch == batch-1 || i == b.N-1 {
					p.Flush()
				}
			}
			all.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N*handlers)/b.Elapsed().Seconds(), "events/s")
			cancel()
			<-stopped
		})
	}
}
