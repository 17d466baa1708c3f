// Package apiserve is the serving core of a Kubernetes-style API: what a
// server must do, beyond holding objects, to answer any client as
// kube-apiserver 1.37 answers it.
//
// It negotiates the representation a request asks for (JSON, or a
// meta.k8s.io Table as kubectl asks for one; a clear 406 otherwise) and
// refuses a body it cannot read with the real server's 415 (Negotiate,
// CheckBody); it compresses a large answer when the client accepts gzip, as
// the real server does past 128 KiB (Compress); it serves /version
// (Version); it prints objects as the real server's tables do, for the
// built-in resources kubectl prints most and for a custom resource's
// additionalPrinterColumns (Printer, Table); and it knows the real
// server's built-in resources, for discovery (BuiltIn).
//
// It works on the JSON bytes a store already holds and never re-encodes
// an object: a Table's row carries the object's metadata as it was stored.
//
// A minimal use, answering a list that may be asked for as a Table:
//
//	out, err := apiserve.Negotiate(req.Header.Get("Accept"))
//	if err != nil {
//		err.Write(w)
//		return
//	}
//	w, done := apiserve.Compress(w, req)
//	defer done()
//	if out.Table {
//		p := apiserve.PrinterFor("", "configmaps")
//		w.Header().Set("Content-Type", "application/json")
//		w.Write(apiserve.AppendTable(nil, p, items, apiserve.ListMeta{ResourceVersion: "7"}, out, time.Now()))
//	}
package apiserve
