package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/watchtest"
)

// source returns a client of a server holding n configmaps.
func source(b *testing.B, n int) *httpwatch.ResourceClient {
	s := watchtest.NewServer()
	b.Cleanup(s.Close)
	for i := range n {
		if _, err := s.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":"cm-%d","namespace":"ns"}}`, i)); err != nil {
			b.Fatal(err)
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(client.CloseIdleConnections)
	return client.Resource(watchtest.ConfigMaps)
}

// reconcileNop reads the key's object from the cache, as a reconcile
// does first, and counts.
func reconcileNop(inf *listwatch.Informer, count *atomic.Int64) func(string) error {
	l := inf.Lister()
	return func(key string) error {
		ns, name, _ := store.SplitKey(key)
		_, err := l.Get(ns, name)
		count.Add(1)
		return err
	}
}

// waitCount polls until count reaches n.
func waitCount(count *atomic.Int64, n int) {
	for count.Load() < int64(n) {
		time.Sleep(50 * time.Microsecond)
	}
}

// The runner's cost per reconcile against the loop on ratelimit.Queue a
// controller writes by hand: each starts an informer of b.N objects and
// reconciles each once, with 4 workers, then shuts down. The list and the
// cache cost the same in both; the difference is the runner's (handlers,
// the version check, the bookkeeping, the ordered shutdown). Run with
// -benchtime=Nx: each iteration is one object.
func BenchmarkRunnerPerReconcile(b *testing.B) {
	rc := source(b, b.N)
	var count atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	inf := listwatch.NewInformer(rc, 0)
	nop := reconcileNop(inf, &count)
	r := reconcile.New(inf, func(_ context.Context, key string) (reconcile.Result, error) { return reconcile.Result{}, nop(key) })
	r.Workers = 4
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	waitCount(&count, b.N)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPlainQueuePerReconcile(b *testing.B) {
	rc := source(b, b.N)
	var count atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	inf := listwatch.NewInformer(rc, 0)
	nop := reconcileNop(inf, &count)
	q := ratelimit.NewQueue(ratelimit.Config[string]{})
	add := func(o *listwatch.Object) { q.Add(listwatch.Key(o)) }
	_, _ = inf.AddEventHandler(listwatch.HandlerFuncs{
		AddFunc:    func(o *listwatch.Object, _ bool) { add(o) },
		UpdateFunc: func(_, o *listwatch.Object) { add(o) },
		DeleteFunc: func(o *listwatch.Object, _ bool) { add(o) },
	})
	ctx, cancel := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() { inf.Run(ctx) })
	for range 4 {
		bg.Go(func() {
			for {
				key, shutdown := q.Get()
				if shutdown {
					return
				}
				if err := nop(key); err != nil {
					q.AddRateLimited(key)
				} else {
					q.Forget(key)
				}
				q.Done(key)
			}
		})
	}
	waitCount(&count, b.N)
	q.ShutDownWithDrain()
	cancel()
	bg.Wait()
	q.ShutDown()
}
