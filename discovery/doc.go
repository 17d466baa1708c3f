// Package discovery says what an API server serves, from its discovery
// documents: which resources, in which scope, under which names, so that a
// misspelt resource or a namespaced one addressed without a namespace is
// told apart from an object that is gone (decision 24), and kubectl's
// short names resolve.
//
// A Cache reads the documents through a Fetcher, lazily, and keeps them
// per group version (decision 23). httpwatch.NewClient makes one for every
// Client, which its requests consult and whose Discover and ResourceFor
// it offers; a program rarely needs one of its own:
//
//	c := discovery.New(fetcher) // anything that GETs a path
//	r, err := c.ResourceFor(ctx, "deploy")
//	// r.Group "apps", r.Version "v1", r.Resource "deployments", r.Namespaced
package discovery
