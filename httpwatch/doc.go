// Package httpwatch lists and watches any Kubernetes-style API resource over
// plain HTTP/JSON, without client-go.
//
// A Client speaks to one API server (see Config); Client.Resource addresses
// one resource and satisfies ListerWatcher, the only view of a source the
// Reflector needs. Objects are kept as immutable raw JSON (Object) with the
// few metadata fields every layer needs parsed once.
package httpwatch
