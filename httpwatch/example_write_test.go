package httpwatch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
)

// fakeServer is a watchtest server and a client of it; close both.
func fakeServer() (*watchtest.Server, *httpwatch.Client) {
	server := watchtest.NewServer()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	if err != nil {
		panic(err)
	}
	return server, client
}

// A merge patch sets a few fields of the latest version, with no read
// first; a JSON patch runs operations, a failed "test" refusing them all.
func ExampleResourceClient_Patch() {
	server, client := fakeServer()
	defer server.Close()
	defer client.CloseIdleConnections()
	ctx := context.Background()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("shop")
	if _, err := cms.Create(ctx, []byte(`{"metadata":{"name":"settings"},"data":{"replicas":"3"}}`)); err != nil {
		panic(err)
	}

	o, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}},"data":{"replicas":null}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Labels(), o.Get("data").Raw)

	_, err = cms.Patch(ctx, "settings", httpwatch.JSONPatch, []byte(`[{"op":"test","path":"/metadata/labels/checked","value":"false"},{"op":"remove","path":"/metadata/labels"}]`))
	var se *httpwatch.StatusError
	if errors.As(err, &se) {
		fmt.Println(se.Code, se.Reason)
	}
	// Output:
	// map[checked:true] {}
	// 422 Invalid
}

// Server-side apply: each manager owns the fields it applied; taking a
// field another manager owns needs Force.
func ExampleResourceClient_Apply() {
	server, client := fakeServer()
	defer server.Close()
	defer client.CloseIdleConnections()
	ctx := context.Background()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("shop")
	config := func(replicas string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"},"data":{"replicas":%q}}`, replicas)
	}

	if _, err := cms.Apply(ctx, config("3"), httpwatch.WriteOptions{FieldManager: "deployer"}); err != nil {
		panic(err)
	}
	_, err := cms.Apply(ctx, config("5"), httpwatch.WriteOptions{FieldManager: "autoscaler"})
	fmt.Println("conflict:", httpwatch.IsConflict(err))
	o, err := cms.Apply(ctx, config("5"), httpwatch.WriteOptions{FieldManager: "autoscaler", Force: true})
	if err != nil {
		panic(err)
	}
	fmt.Println("replicas:", o.Get("data.replicas"))
	// Output:
	// conflict: true
	// replicas: 5
}

// The scale subresource reads and writes a Deployment's replica count; the
// status subresource is where a controller reports.
func ExampleSubresourceClient() {
	server, client := fakeServer()
	defer server.Close()
	defer client.CloseIdleConnections()
	ctx := context.Background()
	deployments := client.Resource(httpwatch.Resource{Group: "apps", Version: "v1", Resource: "deployments"}).Namespace("shop")
	if _, err := deployments.Create(ctx, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1}}`)); err != nil {
		panic(err)
	}

	scale, err := deployments.Subresource("scale").Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"spec":{"replicas":3}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(scale.Get("kind"), scale.Get("spec.replicas"))

	d, err := deployments.Subresource("status").Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"status":{"observedGeneration":2,"replicas":3}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Get("spec.replicas"), d.Get("status.replicas"))
	// Output:
	// Scale 3
	// 3 3
}

// DeleteOptions go with a delete: here preconditions, which make a delete
// of an object replaced in the meantime fail rather than delete the new one.
func ExampleDeleteOptions() {
	server, client := fakeServer()
	defer server.Close()
	defer client.CloseIdleConnections()
	ctx := context.Background()
	cms := client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("shop")
	old, err := cms.Create(ctx, []byte(`{"metadata":{"name":"settings"}}`))
	if err != nil {
		panic(err)
	}
	if _, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, []byte(`{"data":{"replicas":"4"}}`)); err != nil {
		panic(err)
	}

	err = cms.Delete(ctx, "settings", httpwatch.DeleteOptions{Preconditions: httpwatch.Preconditions{ResourceVersion: old.ResourceVersion()}})
	fmt.Println("stale:", httpwatch.IsConflict(err))
	err = cms.Delete(ctx, "settings", httpwatch.DeleteOptions{Preconditions: httpwatch.Preconditions{UID: old.UID()}})
	fmt.Println("deleted:", err == nil)
	// Output:
	// stale: true
	// deleted: true
}
