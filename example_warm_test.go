package listwatch_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/watchtest"
)

// An informer with a snapshot directory starts from its last snapshot: the
// cache is readable at once, and the watch resumes from the snapshot's
// version instead of listing everything again (decision 32).
func ExampleInformer_Snapshot() {
	server := watchtest.NewServer()
	defer server.Close()
	for _, name := range []string{"a", "b"} {
		_, _ = server.Create(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"default"}}`, name))
	}
	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	defer client.CloseIdleConnections()
	dir, _ := os.MkdirTemp("", "agent")
	defer os.RemoveAll(dir)

	start := func(heard chan<- string) func() {
		inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
		inf.Snapshot = snapshot.Options{Dir: dir}
		_, _ = inf.AddEventHandler(listwatch.HandlerFuncs{AddFunc: func(o *listwatch.Object, initial bool) {
			heard <- fmt.Sprintf("add %s initial=%v", o.Name(), initial)
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { inf.Run(ctx); close(done) }()
		_ = inf.Wait(ctx)
		return func() { cancel(); next(done) } // stopping saves the snapshot
	}
	stop := start(make(chan string, 2))
	stop()

	_, _ = server.Create(watchtest.Pods, `{"metadata":{"name":"c","namespace":"default"}}`) // while it was down
	before := len(server.Requests())
	heard := make(chan string, 3)
	stop = start(heard)
	defer stop()
	restored := []string{next(heard), next(heard)}
	slices.Sort(restored) // a snapshot holds no order
	fmt.Println(restored)
	fmt.Println(next(heard))
	for _, r := range server.Requests()[before:] {
		fmt.Println(r.Verb, r.Query.Get("resourceVersion") != "")
	}
	// Output:
	// [add a initial=true add b initial=true]
	// add c initial=false
	// watch true
}

// next is what c says next, or that it said nothing within ten seconds:
// an example that goes wrong fails, it never hangs.
func next[T any](c <-chan T) string {
	select {
	case v := <-c:
		return fmt.Sprint(v)
	case <-time.After(10 * time.Second):
		return "nothing within 10s"
	}
}
