package reflector_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/watchtest"
)

// printSink prints what a reflector hands it and signals the first sync
// and every change.
type printSink struct {
	synced  chan struct{}
	changes chan struct{}
}

func (s *printSink) Add(o *raw.Object) error    { return s.change("add", o) }
func (s *printSink) Update(o *raw.Object) error { return s.change("update", o) }
func (s *printSink) Delete(o *raw.Object) error { return s.change("delete", o) }
func (s *printSink) Resync() error              { return nil }

func (s *printSink) Replace(items []*raw.Object, _ string) error {
	var names []string
	for _, o := range items {
		names = append(names, o.Name())
	}
	slices.Sort(names) // a watch-list delivers them in no particular order
	fmt.Println("replace", names)
	close(s.synced)
	return nil
}

func (s *printSink) change(what string, o *raw.Object) error {
	fmt.Println(what, o.Namespace()+"/"+o.Name())
	s.changes <- struct{}{}
	return nil
}

// A Reflector fills a Sink with the server's pods, then follows their
// changes.
func Example() {
	server := watchtest.NewServer()
	defer server.Close()
	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"web-1","namespace":"prod"}}`)
	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"web-2","namespace":"prod"}}`)

	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()
	sink := &printSink{synced: make(chan struct{}), changes: make(chan struct{}, 1)}
	r := reflector.New(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), sink)

	// The deadline bounds every wait: a step that never comes ends Run and
	// the Output differs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	await := func(ch <-chan struct{}) {
		select {
		case <-ch:
		case <-ctx.Done():
		}
	}
	await(sink.synced)
	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"db-1","namespace":"prod"}}`)
	await(sink.changes)
	cancel()
	<-done
	fmt.Println("lists:", r.Stats().Lists)
	// Output:
	// replace [web-1 web-2]
	// add prod/db-1
	// lists: 1
}
