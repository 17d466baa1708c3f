// Package cacheserve serves informers' caches over the Kubernetes list and
// watch HTTP API, so that the other programs of a node (kubectl, client-go
// and listwatch informers) read one cache, fed by one upstream watch per
// resource, instead of each watching the API server (decision 43).
//
// Each informer added mirrors what its reflector delivers, in the
// server's order, into a Cache (listwatch.Informer.Mirror): the objects at
// the version reached, and a bounded history of events. Lists are served
// from immutable snapshots sorted by key, exactly at a resourceVersion the
// history still spans; watches replay the history after their version,
// with bookmarks at the version the watcher has reached. Whatever the
// cache cannot answer completely is refused with a Status that says why,
// or, with a Proxy, forwarded to the API server with the client's own
// bearer token (decision 45). A Reviewer authorizes requests by the API
// server's TokenReview and SubjectAccessReview, cached, and offline within
// a stated staleness; a unix socket's file mode is the simple local
// option. While the cache may be behind the API server, every response
// carries a Warning and Stats says so; served versions never go
// backwards. Lists and watches are served by apiserve's serving core over
// the cache (apiserve.ServeList, apiserve.ServeWatch; decision 44), as are
// the wire details (discovery, selectors, Status errors, Tables).
//
//	srv := &cacheserve.Server{}
//	if srv.Proxy, err = cacheserve.NewProxy(cfg); err != nil { // cfg: httpwatchClient's own
//		return err
//	}
//	pods := httpwatchClient.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
//	inf := listwatch.NewInformer(pods, 0, listwatch.Selector{Field: "spec.nodeName=" + node})
//	if _, err := srv.Add(inf, pods, apiserve.APIResource{}); err != nil {
//		return err
//	}
//	go inf.Run(ctx)
//	l, err := cacheserve.ListenUnix("/run/podcache.sock", 0o600)
//	if err != nil {
//		return err
//	}
//	return srv.Serve(ctx, l)
package cacheserve
