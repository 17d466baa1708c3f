package listwatch_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// Wait returns the reason an informer cannot sync as soon as it is one
// that retrying will not cure, here RBAC refusing the list. The informer
// goes on retrying, so a fix made later heals it.
func ExampleInformer_Wait() {
	server := watchtest.NewServer()
	defer server.Close()
	server.FailNext(watchtest.Failure{Code: 403, Message: `pods is forbidden: User "nobody" cannot list resource "pods"`, Times: 1000})

	client, _ := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	defer client.CloseIdleConnections()
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	inf.Reflector.Name = "pods"
	inf.Logger = slog.New(slog.DiscardHandler) // it logs the 403 once, at Error
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()

	err := inf.Wait(ctx)
	fmt.Println(err)
	fmt.Println("forbidden:", httpwatch.IsForbidden(err), "permanent:", httpwatch.IsPermanent(err))
	cancel()
	<-done
	// Output:
	// pods not synced: reflector pods: list: GET /api/v1/pods: 403 Forbidden: pods is forbidden: User "nobody" cannot list resource "pods"
	// forbidden: true permanent: true
}
