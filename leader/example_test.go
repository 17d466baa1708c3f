package leader_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/watchtest"
)

func Example() {
	srv := watchtest.NewServer()
	defer srv.Close()
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.CloseIdleConnections()

	// Run returns at this deadline at the latest: a broken example fails,
	// not hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	el, err := leader.New(leader.Config{
		Leases: client.Resource(httpwatch.Resource{Group: "coordination.k8s.io",
			Version: "v1", Resource: "leases", Namespace: "default"}),
		Name:            "example",
		Identity:        "replica-1",
		ReleaseOnCancel: true,
		OnStartedLeading: func(ctx context.Context) {
			fmt.Println("leading")
			cancel() // the work is done: shut down
			<-ctx.Done()
		},
		OnStoppedLeading: func() { fmt.Println("stopped leading") },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("run:", el.Run(ctx))
	lease, _ := srv.Get(watchtest.Leases, "default", "example")
	fmt.Printf("holder %q, leaseDurationSeconds %d\n",
		lease.Get("spec.holderIdentity").String(), lease.Get("spec.leaseDurationSeconds").Int())
	// Output:
	// leading
	// stopped leading
	// run: <nil>
	// holder "", leaseDurationSeconds 1
}
