// Package httpwatch lists and watches any Kubernetes-style API resource over
// plain HTTP/JSON, without client-go.
//
// A Client speaks to one API server (see package kubeconfig);
// Client.Resource addresses one resource and returns a *ResourceClient, to
// list, watch, read and write it:
//
//	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: "https://127.0.0.1:6443", BearerToken: token})
//	pods := c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "default"})
//	list, err := pods.List(ctx, httpwatch.ListOptions{})       // every page
//	w, err := pods.Watch(ctx, httpwatch.ListOptions{ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
//	defer w.Stop()
//	for {
//		ev, err := w.Next() // io.EOF when the server ends the stream
//		...
//	}
//
// # Reaching a cluster
//
// NewClient takes a *kubeconfig.Config: package kubeconfig reads kubeconfig
// files, exec credential plugins, token files and in-cluster service
// accounts, and keeps the secrets out of logs, errors and redirects.
//
// # Objects
//
// Responses become objects of package raw: a raw.Object is the JSON of one
// API object, copied out of the read buffer, with namespace, name,
// resourceVersion and uid located once; read other fields with Get (gjson
// paths) or Decode into a struct. metadata.managedFields is dropped while
// copying unless ResourceClient.KeepManagedFields is set;
// ResourceClient.Projection (a raw.Projection from gjson member paths such
// as "metadata.labels") keeps only the fields it names, cutting the rest
// while copying; and ResourceClient.Transform, the one transform hook,
// rewrites each object once as it is read, before anything caches it.
// MetadataOnly asks the server for PartialObjectMetadata, for caches that
// need only labels and owners.
//
// # Reading
//
// Neither lists nor watches are ever decoded into a tree: package raw scans
// a list body item by item, and frames a watch body event by event,
// checking each as encoding/json.Valid would, within Client.MaxFrameSize.
// What it cannot read is a *DecodeError naming the request, the event or
// item and the byte, and never reaches a cache.
//
// Non-streaming requests are retried with backoff and jitter on connection
// errors, 429 (honouring Retry-After) and 5xx; other errors are a
// *StatusError at once. ListAll follows continue tokens (500 items a page by
// default) and falls back to one unpaginated list when a token expires.
//
// # Writing
//
// Create, Update and Delete write whole objects; Patch changes some fields
// with a JSON merge patch, a JSON patch or a strategic merge patch, with no
// resourceVersion needed; Apply is server-side apply, where the server
// merges the fields a named manager owns and reports a 409 Conflict for a
// field another manager owns, unless forced. Every write takes its options
// as one optional trailing value, whose zero value is the default: a
// WriteOptions (DryRun, FieldManager, FieldValidation) for Create, Update,
// Patch and Apply, whose FieldManager the server requires (an Apply without
// one fails before it is sent) and which alone may Force, a DeleteOptions
// (PropagationPolicy, GracePeriodSeconds, Preconditions, DryRun) for Delete
// and DeleteCollection, which deletes what a list's selectors match.
// Subresource("status") and Subresource("scale") read and write
// subresources, and Namespace derives a client for one namespace:
//
//	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}).Namespace("default")
//	o, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}}}`),
//		httpwatch.WriteOptions{FieldManager: "labeller"})
//	_, err = deployments.Subresource("status").Update(ctx, withStatus)
//	err = cms.Delete(ctx, "settings", httpwatch.DeleteOptions{Preconditions: httpwatch.Preconditions{UID: o.UID()}})
//
// A 409 Conflict from a stale resourceVersion clears once the object is read
// again: RetryOnConflict retries a read-modify-write. The server's warnings
// (an unknown field under FieldValidationWarn, a deprecated API) are logged
// to Client.Logger.
//
// # Errors and the watch contract
//
// Server failures are *StatusError values that name the request; IsGone,
// IsNotFound, IsConflict, IsTooManyRequests, IsForbidden,
// IsUnauthorized, IsInternalError and IsResourceVersionTooLarge work through
// %w wrapping. They follow the API server's own helpers, except that IsGone
// also accepts reason Expired (upstream callers test both).
//
// A Watcher is pulled, not pushed: Next blocks on the caller's goroutine,
// which builds the events' objects, while one goroutine per watch reads the
// body and frames and checks the events ahead of it, handing them over once
// per read rather than once per event; Stop ends it and waits for it.
// client-go's channel-based contract maps as
// follows (docs/behaviour.md, items 1–6): a non-200 answer is a *StatusError from
// Watch; a connection that ends before the answer is the error from Watch
// that says how (client-go gives an empty stream; decision 38); a clean end
// of the body is io.EOF; a connection
// cut mid-stream is an error for which IsProbableEOF is true (client-go
// ends such a stream silently); a malformed stream or unknown event type is
// a *DecodeError (client-go sends a synthetic ERROR event); an ERROR event
// arrives as Event{Type: Error, Err: *StatusError}. After Stop, Next
// returns io.EOF and delivers nothing more.
//
// Nothing waits for ever on a silent connection (decision 36): an HTTP/2
// connection whose ping goes unanswered fails every request on it with an
// error wrapping ErrConnectionLost, said once at Warn; a watch that hears
// no byte for its bound (ListOptions.IdleTimeout while its server is
// taken to send bookmarks, else its TimeoutSeconds plus 30 s) ends with
// ErrWatchIdle; every other request has the
// Config.Timeout of its attempt. IsProbableEOF reports all three, so a
// watch resumes and a read is retried.
//
// # Keeping a cache in sync
//
// Package reflector drives a ResourceClient (or any source with the same
// list and watch methods) into a cache: it lists or streams the initial
// state, watches from there, and relists when the server says a version is
// gone, following client-go's reflector.
package httpwatch
