package delta_test

import (
	"fmt"
	"testing"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/store"
)

// BenchmarkPushPop is one Add followed by one Pop: the cost an event pays
// to cross the queue. "namespaced" includes building the "ns/name" key.
func BenchmarkPushPop(b *testing.B) {
	for _, bc := range []struct {
		name string
		obj  *obj
	}{
		{"cluster", &obj{name: "node-1", v: "1"}},
		{"namespaced", o("web-0", "1")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			f := delta.NewFIFO(key)
			b.ReportAllocs()
			for b.Loop() {
				if err := f.Add(bc.obj); err != nil {
					b.Fatal(err)
				}
				if _, err := f.Pop(nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBurst queues 1,000 distinct keys, then pops them all; ns/op is
// per object.
func BenchmarkBurst(b *testing.B) {
	objs := make([]*obj, 1000)
	for i := range objs {
		objs[i] = o(fmt.Sprint("p", i), "1")
	}
	f := delta.NewFIFO(key)
	b.ReportAllocs()
	for i := 0; i < b.N; i += len(objs) {
		for _, x := range objs {
			if err := f.Add(x); err != nil {
				b.Fatal(err)
			}
		}
		for range objs {
			if _, err := f.Pop(nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkProducerConsumer runs a producer and a consumer goroutine
// concurrently; ns/op is per object.
func BenchmarkProducerConsumer(b *testing.B) {
	f := delta.NewFIFO(key)
	x := &obj{name: "node-1", v: "1"}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := f.Pop(nil); err != nil {
				return
			}
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if err := f.Add(x); err != nil {
			b.Fatal(err)
		}
	}
	f.Close()
	<-done
}

// BenchmarkReplace queues a list of 10,000 objects with Replace and pops
// it: "first" is the first sync (nothing known), "relist" a relist whose
// objects the consumer all holds already. ns/op is per object.
func BenchmarkReplace(b *testing.B) {
	objs := make([]*obj, 10000)
	for i := range objs {
		objs[i] = o(fmt.Sprint("p", i), "1")
	}
	for _, relist := range []bool{false, true} {
		name := "first"
		if relist {
			name = "relist"
		}
		b.Run(name, func(b *testing.B) {
			cache := store.New(key)
			if relist {
				for _, x := range objs {
					if err := cache.Add(x); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i += len(objs) {
				f := delta.NewFIFO(key)
				f.KnownObjects = cache
				if err := f.Replace(objs, "1"); err != nil {
					b.Fatal(err)
				}
				for range objs {
					if _, err := f.Pop(nil); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
