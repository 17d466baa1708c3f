package listwatch

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/raw"
	"github.com/tidwall/gjson"
)

// fixturePod is a real pod as a kube-apiserver lists it (managedFields
// included), with a placeholder name.
func fixturePod(b *testing.B) string {
	item := gjson.GetBytes(fixtures.Load(b, "pod-list.json").Body, "items.0")
	return strings.Replace(item.Raw, `"name":"`+item.Get("metadata.name").String()+`"`, `"name":"%s"`, 1)
}

// podSource holds n recorded pods, with or without their managedFields (as
// a client with or without KeepManagedFields reads them), and says how big
// each pod's JSON was as the server sent it.
func podSource(b *testing.B, n int, keepManagedFields bool) (*memSource, int) {
	tmpl := fixturePod(b)
	src := newMemSource()
	size := 0
	for i := range n {
		src.rv++
		data := fmt.Sprintf(tmpl, fmt.Sprintf("pod-%06d", i))
		data = strings.Replace(data, `"resourceVersion":"`, fmt.Sprintf(`"resourceVersion":"%d`, src.rv), 1)
		size += len(data)
		if !keepManagedFields {
			mf := gjson.Get(data, "metadata.managedFields")
			data = strings.Replace(data, `"managedFields":`+mf.Raw+`,`, "", 1)
		}
		o, err := raw.NewObject([]byte(data))
		if err != nil {
			b.Fatal(err)
		}
		src.objs[Key(o)] = o
	}
	return src, size / n
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkInformerSync syncs 10,000 pods through the whole informer and
// reports the heap each cached object costs beside its JSON size. The
// source's own copies are freed before measuring, so only the cache counts.
func BenchmarkInformerSync(b *testing.B) {
	for _, keep := range []bool{true, false} {
		b.Run(fmt.Sprintf("keepManagedFields=%v", keep), func(b *testing.B) {
			const n = 10000
			var perObject, raw float64
			for range b.N {
				b.StopTimer()
				base := heapInUse()
				src, size := podSource(b, n, keep)
				raw = float64(size)
				inf := NewInformer(src, 0)
				var seen atomic.Int64
				_, _ = inf.AddEventHandler(HandlerFuncs{AddFunc: func(*Object, bool) { seen.Add(1) }})
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				b.StartTimer()
				go func() { inf.Run(ctx); close(done) }()
				<-inf.warm.synced
				b.StopTimer()
				src.objs = nil // keep only what the informer holds
				perObject = float64(heapInUse()-base) / n
				cancel()
				<-done
			}
			b.ReportMetric(perObject, "heapB/obj")
			b.ReportMetric(raw, "jsonB/obj")
			b.ReportMetric(perObject/raw, "heap/json")
		})
	}
}

// BenchmarkInformerEvents measures watch events (adds, then updates of 100
// pods) through the informer to 1 and 10 handlers.
func BenchmarkInformerEvents(b *testing.B) {
	for _, handlers := range []int{1, 10} {
		b.Run(fmt.Sprintf("handlers=%d", handlers), func(b *testing.B) {
			src, _ := podSource(b, 100, false)
			inf := NewInformer(src, 0)
			var seen atomic.Int64
			for range handlers {
				_, _ = inf.AddEventHandler(HandlerFuncs{
					AddFunc: func(_ *Object, initial bool) {
						if !initial {
							seen.Add(1)
						}
					},
					UpdateFunc: func(_, _ *Object) { seen.Add(1) },
				})
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { inf.Run(ctx); close(done) }()
			defer func() { cancel(); <-done }()
			<-inf.warm.synced
			b.ResetTimer()
			for i := range b.N {
				src.put("ns", fmt.Sprint("p", i%100), "web")
			}
			for seen.Load() < int64(b.N*handlers) {
				runtime.Gosched()
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
