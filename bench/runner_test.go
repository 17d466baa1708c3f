package bench_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/watchtest"
)

// runnerSource returns a client of a test server holding n configmaps.
func runnerSource(b *testing.B, n int) *httpwatch.ResourceClient {
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

// readKey reads the key's object from the cache, as a reconcile does
// first, and counts.
func readKey(inf *listwatch.Informer, count *atomic.Int64) func(string) error {
	l := inf.Lister()
	return func(key string) error {
		ns, name, _ := store.SplitKey(key)
		_, err := l.Get(ns, name)
		count.Add(1)
		return err
	}
}

func untilCount(count *atomic.Int64, n int) {
	for count.Load() < int64(n) {
		time.Sleep(50 * time.Microsecond)
	}
}

// The reconcile runner against client-go's workqueue loop written by
// hand, each fed by a listwatch informer of b.N configmaps, 4 workers,
// every object reconciled once, then shut down: the list and the cache
// cost the same, the difference is the runner's. -benchtime=Nx: each
// iteration is one object.
func BenchmarkReconcileRunner(b *testing.B) {
	rc := runnerSource(b, b.N)
	var count atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	inf := listwatch.NewInformer(rc, 0)
	read := readKey(inf, &count)
	r := reconcile.New(inf, func(_ context.Context, key string) (reconcile.Result, error) { return reconcile.Result{}, read(key) })
	r.Workers = 4
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	untilCount(&count, b.N)
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

func BenchmarkReconcileClientGoWorkqueue(b *testing.B) {
	rc := runnerSource(b, b.N)
	var count atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	inf := listwatch.NewInformer(rc, 0)
	read := readKey(inf, &count)
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
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
				if err := read(key); err != nil {
					q.AddRateLimited(key)
				} else {
					q.Forget(key)
				}
				q.Done(key)
			}
		})
	}
	untilCount(&count, b.N)
	q.ShutDownWithDrain()
	cancel()
	bg.Wait()
	q.ShutDown() // the drain leaves the delaying queue's goroutine running
}
