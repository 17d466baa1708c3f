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
// handlers that do nothing: the processor's own cost per event.
func BenchmarkDistribute(b *testing.B) {
	for _, handlers := range []int{1, 10} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
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
			for range b.N {
				p.Distribute(processor.Updated(obj, obj, false))
			}
			all.Wait()
			b.StopTimer()
			b.ReportMetric(float64(b.N*handlers)/b.Elapsed().Seconds(), "events/s")
			cancel()
			<-stopped
		})
	}
}
