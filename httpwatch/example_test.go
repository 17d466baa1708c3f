package httpwatch_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
)

// fixtureServer serves one recorded kube-apiserver response to every
// request.
func fixtureServer(name string) *httptest.Server {
	fx, err := fixtures.Get(name)
	if err != nil {
		panic(err)
	}
	return httptest.NewServer(fx)
}

func ExampleResourceClient_List() {
	srv := fixtureServer("pod-list.json")
	defer srv.Close()

	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	pods := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"})
	list, err := pods.List(context.Background(), httpwatch.ListOptions{})
	if err != nil {
		panic(err)
	}
	fmt.Println("resourceVersion", list.ResourceVersion)
	for _, p := range list.Items {
		tier, _ := p.Label("tier")
		fmt.Println(p.Kind(), p.Namespace(), p.Name(), p.ResourceVersion(), tier, p.Get("spec.containers.0.image"))
	}
	// Output:
	// resourceVersion 75
	// Pod fixtures web-1 73 t1 nginx:1.27
	// Pod fixtures web-2 74 t0 nginx:1.27
	// Pod fixtures web-3 75 t1 nginx:1.27
}

func ExampleResourceClient_Watch() {
	srv := fixtureServer("watch-from-rv.jsonl")
	defer srv.Close()

	c, _ := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	pods := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"})
	w, err := pods.Watch(context.Background(), httpwatch.ListOptions{ResourceVersion: "75", AllowWatchBookmarks: true})
	if err != nil {
		panic(err)
	}
	defer w.Stop()
	for {
		ev, err := w.Next()
		if err == io.EOF {
			fmt.Println("stream ended; resume from the last resourceVersion")
			return
		}
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Type, ev.Object.Name(), ev.Object.ResourceVersion())
	}
	// Output:
	// MODIFIED web-1 76
	// ADDED web-4 77
	// MODIFIED web-2 78
	// DELETED web-2 79
	// stream ended; resume from the last resourceVersion
}

// A watch from a resourceVersion the server no longer has: HTTP 200, then
// one ERROR event carrying a 410 Status.
func ExampleIsGone() {
	srv := fixtureServer("watch-too-old-rv.jsonl")
	defer srv.Close()

	c, _ := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	w, _ := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}).Watch(context.Background(), httpwatch.ListOptions{ResourceVersion: "2"})
	defer w.Stop()
	ev, _ := w.Next()
	fmt.Println(ev.Type, httpwatch.IsGone(ev.Err))
	fmt.Println(ev.Err)
	// Output:
	// ERROR true
	// WATCH /api/v1/pods: 410 Expired: The resourceVersion for the provided watch is too old.
}

func ExampleParseListOptions() {
	r := httptest.NewRequest("GET", "/api/v1/pods?watch=true&resourceVersion=42&allowWatchBookmarks=1&timeoutSeconds=300", nil)
	opts, watch, err := httpwatch.ParseListOptions(r.URL.Query())
	fmt.Println(watch, opts.ResourceVersion, opts.AllowWatchBookmarks, opts.TimeoutSeconds, err)
	fmt.Println(opts.Values(watch).Encode())
	// Output:
	// true 42 true 300 <nil>
	// allowWatchBookmarks=true&resourceVersion=42&timeoutSeconds=300&watch=1
}

func ExampleNewProjection() {
	srv := fixtureServer("pod-list.json")
	defer srv.Close()

	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL})
	if err != nil {
		panic(err)
	}
	pods := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "fixtures"})
	pods.Projection, err = raw.NewProjection("metadata.labels", "status.phase")
	if err != nil {
		panic(err)
	}
	list, err := pods.List(context.Background(), httpwatch.ListOptions{})
	if err != nil {
		panic(err)
	}
	p := list.Items[0]
	fmt.Println(p)
	fmt.Println(p.Labels(), p.Get("spec.containers").Exists())

	_, err = raw.NewProjection("spec.containers.#.image")
	fmt.Println(errors.Is(err, raw.ErrProjectionPath))
	// Output:
	// {"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"fixtures","uid":"20eb0800-339d-4377-be80-43e4346bb0c4","resourceVersion":"73","labels":{"app":"web","tier":"t1"}},"status":{"phase":"Pending"}}
	// map[app:web tier:t1] false
	// true
}
