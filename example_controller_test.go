package listwatch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/store"
	"github.com/listwatch/listwatch/watchtest"
)

// labeller labels every configmap checked=true, at the version it checked.
type labeller struct {
	cms     *httpwatch.ResourceClient
	lister  *listwatch.Lister
	queue   *ratelimit.Queue[string]
	labeled chan string // told each key the controller labels
}

// work takes keys off the queue until it shuts down; a failed key comes
// back later, after a backoff.
func (l *labeller) work(ctx context.Context) {
	for {
		key, shutdown := l.queue.Get()
		if shutdown {
			return
		}
		if err := l.reconcile(ctx, key); err != nil {
			l.queue.AddRateLimited(key)
		} else {
			l.queue.Forget(key)
		}
		l.queue.Done(key)
	}
}

// reconcile patches the label in, with the resourceVersion it checked: a
// configmap changed since is a 409 Conflict, and is checked again at its
// latest version.
func (l *labeller) reconcile(ctx context.Context, key string) error {
	ns, name, err := store.SplitKey(key)
	if err != nil {
		return err
	}
	cm, err := l.lister.ByNamespace(ns).Get(name)
	if httpwatch.IsNotFound(err) {
		return nil // deleted since
	}
	if err != nil {
		return err
	}
	live := l.cms.Namespace(ns)
	return httpwatch.RetryOnConflict(ctx, func(ctx context.Context) error {
		if v, _ := cm.Label("checked"); v == "true" {
			return nil
		}
		body, err := patch.Merge(cm, patch.ResourceVersion).Set("metadata.labels.checked", "true").Bytes()
		if err != nil {
			return err
		}
		_, err = live.Patch(ctx, name, httpwatch.MergePatch, body, httpwatch.WriteOptions{FieldManager: "labeller"})
		if httpwatch.IsConflict(err) {
			if latest, getErr := live.Get(ctx, name); getErr == nil {
				cm = latest
			}
		}
		if err == nil {
			l.labeled <- key
		}
		return err
	})
}

// A controller: an informer feeds a rate-limited queue, a worker patches
// each configmap with a label.
func Example_controller() {
	server := watchtest.NewServer()
	defer server.Close()
	for _, cm := range []string{
		`{"metadata":{"name":"settings","namespace":"shop"},"data":{"replicas":"3"}}`,
		`{"metadata":{"name":"flags","namespace":"shop"},"data":{"beta":"on"}}`,
		`{"metadata":{"name":"theme","namespace":"blog","labels":{"checked":"true"}}}`,
	} {
		if _, err := server.Create(watchtest.ConfigMaps, cm); err != nil {
			panic(err)
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	if err != nil {
		panic(err)
	}
	defer client.CloseIdleConnections()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"})

	inf := listwatch.NewInformer(cms, 0)
	l := &labeller{cms: cms, lister: inf.Lister(), labeled: make(chan string, 10),
		queue: ratelimit.NewQueue(ratelimit.Config[string]{Name: "labeller"})}
	enqueue := func(cm *listwatch.Object) { l.queue.Add(listwatch.Key(cm)) }
	if _, err := inf.AddEventHandler(listwatch.HandlerFuncs{
		AddFunc:    func(cm *listwatch.Object, _ bool) { enqueue(cm) },
		UpdateFunc: func(_, cm *listwatch.Object) { enqueue(cm) },
	}); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds every wait below
	informerDone, workerDone := make(chan struct{}), make(chan struct{})
	go func() { inf.Run(ctx); close(informerDone) }()
	go func() { l.work(ctx); close(workerDone) }()
	for range 2 {
		select {
		case key := <-l.labeled:
			fmt.Println("labelled", key)
		case <-time.After(10 * time.Second):
			fmt.Println("timed out")
		}
	}
	cancel()
	l.queue.ShutDown()
	<-informerDone
	<-workerDone
	// Unordered output:
	// labelled shop/settings
	// labelled shop/flags
}
