package cacheserve_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// A served cache answers what it holds and forwards to the API server, with
// the client's own bearer token, what it cannot answer completely: here a
// write. A client without a token of its own is refused: the cache never
// lends its credentials (decision 45).
func ExampleProxy() {
	up := watchtest.NewServer() // the API server
	defer up.Close()
	cfg := &kubeconfig.Config{Host: up.URL} // the node cache's own
	client, _ := httpwatch.NewClient(cfg)
	defer client.CloseIdleConnections()
	pods := client.Resource(watchtest.Pods)
	inf := listwatch.NewInformer(pods, 0)

	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }} // a trusted test listener
	srv.Proxy, _ = cacheserve.NewProxy(cfg)
	_, _ = srv.Add(inf, pods, apiserve.APIResource{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { cancel(); <-done }()
	_ = inf.Wait(ctx)
	local := httptest.NewServer(srv)
	defer local.Close()

	for _, token := range []string{"my-own-token", ""} {
		req, _ := http.NewRequest(http.MethodPost, local.URL+"/api/v1/namespaces/default/pods",
			strings.NewReader(`{"metadata":{"name":"web-1","namespace":"default"}}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		resp.Body.Close()
		fmt.Println(resp.Status)
	}
	// Output:
	// 201 Created
	// 403 Forbidden
}
