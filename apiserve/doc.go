// Package apiserve is the serving core of a Kubernetes-style API: what a
// server must do, beyond holding objects, to answer any client as
// kube-apiserver 1.37 answers it. watchtest is this core over a store of
// its own that takes writes; a cache that mirrors an upstream can be the
// same core over what it has seen.
//
// The core reads a resource through Store, a versioned store with a
// history held still through a View, and writes the objects' JSON as the
// store holds it, never re-encoded. It serves:
//
//   - Lists (ServeList): the snapshot resourceVersion semantics pick,
//     pages of one snapshot with continue tokens, 410 and 504 as the real
//     server answers them, as a list or as a Table.
//   - Watches (ServeWatch) over a History, a Store whose events a watch
//     follows, kept in a Log bounded as the real watch cache bounds its
//     own: replay from a version, 410 "too old resource version" past
//     the history, sendInitialEvents and its end bookmark, bookmarks
//     every minute and before the deadline, objects entering and leaving
//     a selection (Selected); the events as the real server writes them
//     (AppendEvent, AppendBookmark, AppendError).
//   - The rules of list and watch parameters (CheckListOptions,
//     CheckWatchOptions) and of selectors, in the real server's words,
//     with each resource's real field selectors (ParseFilter, Filter).
//   - Discovery of the real server's built-in resources and of custom
//     ones (ServeDiscovery, BuiltIn), and /version (Version).
//   - Content negotiation (Negotiate: JSON, or a meta.k8s.io Table as
//     kubectl asks for one; 406 otherwise; CheckBody: the real 415 for a
//     body that is not JSON) and gzip past 128 KiB (Compress).
//   - Tables with the real server's columns for the built-in resources
//     kubectl prints most and for a custom resource's
//     additionalPrinterColumns (PrinterFor, CustomPrinter, AppendTable).
//   - Failures as the real server's Status objects (Error).
//
// A minimal use, answering a list over a Store:
//
//	out, err := apiserve.Negotiate(req.Header.Get("Accept"))
//	if err != nil {
//		err.Write(w)
//		return
//	}
//	w, done := apiserve.Compress(w, req)
//	defer done()
//	var table *apiserve.TableOutput
//	if out.Table {
//		table = &apiserve.TableOutput{Printer: apiserve.PrinterFor("", "configmaps"),
//			Request: apiserve.TableRequest{Output: out, Now: time.Now()}}
//	}
//	layout := apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}
//	apiserve.ServeList(req.Context(), w, store, apiserve.ListQuery{}, layout, table)
//
// A watch is served the same way, over a History, whose holder appends
// each change to a Log under its own lock:
//
//	q := apiserve.WatchQuery{ResourceVersion: rv, StartRV: n, AllowBookmarks: true}
//	apiserve.ServeWatch(req.Context(), w, history, q, apiserve.WatchStream{Layout: layout})
package apiserve
