package discovery_test

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/discovery"
)

// documents is a Fetcher serving discovery documents from memory.
type documents map[string]string

func (d documents) Fetch(_ context.Context, path, _ string) ([]byte, error) {
	doc, ok := d[path]
	if !ok {
		return nil, fmt.Errorf("GET %s: 404: %w", path, discovery.ErrNotFound)
	}
	return []byte(doc), nil
}

func Example() {
	c := discovery.New(documents{
		"/api": `{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":""},"versions":[{"version":"v1","resources":[
			{"resource":"configmaps","responseKind":{"kind":"ConfigMap"},"scope":"Namespaced","singularResource":"configmap","shortNames":["cm"]}]}]}]}`,
		"/apis": `{"kind":"APIGroupDiscoveryList","items":[{"metadata":{"name":"apps"},"versions":[{"version":"v1","resources":[
			{"resource":"deployments","responseKind":{"kind":"Deployment"},"scope":"Namespaced","singularResource":"deployment","shortNames":["deploy"]}]}]}]}`,
	})
	ctx := context.Background()
	r, _ := c.ResourceFor(ctx, "deploy")
	fmt.Println(r, r.Kind, r.Namespaced)
	_, err := c.ResourceFor(ctx, "configmap.v2")
	fmt.Println(err)
	_, _, why := c.Lookup(ctx, "", "v1", "configmap")
	fmt.Println(why)
	// Output:
	// deployments.v1.apps Deployment true
	// resource "configmap.v2" (did you mean configmaps in v1?): the server has no such resource
	// the core API v1 serves no resource "configmap" (did you mean configmaps?): the server has no such resource
}
