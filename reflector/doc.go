// Package reflector keeps a local copy of one Kubernetes-style resource
// equal to the server's: a Reflector lists the resource (page by page, or
// as a watch-list stream), watches it from the listed resourceVersion, and
// hands every change to a Sink, relisting and backing off as client-go's
// reflector does. It is the stage between the wire client (httpwatch) and
// the queue (delta) in
//
//	httpwatch → reflector → delta → store and indexer → processor → listwatch.Informer
//
// Most programs use a listwatch.Informer, which runs a Reflector into a
// delta.FIFO. Running one alone takes a source and a Sink:
//
//	pods := client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"})
//	r := reflector.New(pods, sink) // e.g. a *delta.FIFO[*raw.Object]
//	r.LabelSelector = "app=web"
//	go r.Run(ctx)
//
// # How it works
//
// The Reflector is a state machine whose every decision reads one state
// value: where it stands (list, watch-list, watch, reading a stream) and
// what it has learnt (the last synced resourceVersion, whether the server
// said that version is gone, whether lists come back in pages, when the
// next resync is due, the backoff sequence). Run feeds each state to a
// step and gets the next one and how long to wait before it; tests do the
// same with any state they like.
//
// Run works on its own goroutine, one step at a time, reading the open
// watch itself; while a watch with a deadline is open (a resync period, a
// watch-list awaiting its end) one more goroutine reads it, so that a
// quiet watch does not delay the deadline. Errors it
// recovers from reach OnError as a *SyncError whose Op says what it was
// doing; Stats counts lists, pages, watches, events and errors.
package reflector
