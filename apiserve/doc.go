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
//   - Watch events as the real server writes them (AppendEvent,
//     AppendBookmark, AppendError), and what a watch with selectors sees
//     of a change (Selected).
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
// Watches are still fanned out by watchtest itself: the core writes their
// events, but the registry of open watches, their buffers and bookmarks
// are not yet behind Store.
package apiserve
