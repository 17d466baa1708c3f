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
// An Object is the raw JSON of one API object, copied out of the read
// buffer, with namespace, name, resourceVersion and uid located once; read
// other fields with Get (gjson paths) or Decode into a struct. Objects are
// immutable and cost their JSON plus a few dozen bytes. Items of built-in
// lists carry no kind or apiVersion on the wire; the list scanner inserts
// them (from the list's kind and apiVersion), so an object reads the same
// whether it came from a list or a watch. metadata.managedFields is dropped
// while copying unless ResourceClient.KeepManagedFields is set, and
// ResourceClient.Transform, the one transform hook, rewrites each object once
// as it is read, before anything caches it; MetadataOnly asks the server for
// PartialObjectMetadata, for caches that need only labels and owners.
//
// # Projections: cache only what you read
//
// ResourceClient.Projection, made by NewProjection from gjson member paths
// ("metadata.labels", "spec.nodeName"), keeps only those fields (and kind,
// apiVersion and the identity in metadata) of every object, cutting the
// rest while copying it out of the read buffer, before Transform: the
// discarded bytes are never copied. A projected object reads as if the
// server had sent nothing else. Heap per object is then about the kept
// JSON: see Projection for the paths accepted and the cost.
//
// # Reading
//
// Neither lists nor watches are ever decoded into a tree. A list body is
// scanned item by item and each item is copied out as soon as it is whole,
// so memory is the items plus one read buffer. A watch body is split into
// frames by finding each JSON value's end directly (brackets
// outside strings, escapes inside them): it does not depend on newlines or
// on how the body was chunked, and it bounds the frame size
// (Client.MaxFrameSize). The same pass checks each event and item as
// encoding/json.Valid would, so one that is not JSON, at any depth, is a
// *DecodeError naming the event or item and the byte, and never reaches a
// cache.
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
// field another manager owns, unless forced. Writes take a WriteOptions
// (DryRun, FieldManager, FieldValidation) as a trailing argument, deletes a
// DeleteOptions (PropagationPolicy, GracePeriodSeconds, Preconditions,
// DryRun); DeleteCollection deletes what a list's selectors match.
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
// IsExpired, IsNotFound, IsConflict, IsTooManyRequests, IsForbidden,
// IsUnauthorized, IsInternalError and IsResourceVersionTooLarge work through
// %w wrapping. They follow the API server's own helpers, except that IsGone
// also accepts reason Expired (upstream callers test both).
//
// A Watcher is pulled, not pushed: Next blocks on the caller's goroutine and
// the package starts none. client-go's channel-based contract maps as
// follows (docs/behaviour.md, items 1–6): a non-200 answer is a *StatusError from
// Watch; a connection that ends before the answer gives an empty Watcher
// (Next returns io.EOF); a clean end of the body is io.EOF; a connection
// cut mid-stream is an error for which IsProbableEOF is true (client-go
// ends such a stream silently); a malformed stream or unknown event type is
// a *DecodeError (client-go sends a synthetic ERROR event); an ERROR event
// arrives as Event{Type: Error, Err: *StatusError}. After Stop, Next
// returns io.EOF and delivers nothing more.
//
// # Keeping a cache in sync
//
// Package reflector drives a ResourceClient (or any source with the same
// list and watch methods) into a cache: it lists or streams the initial
// state, watches from there, and relists when the server says a version is
// gone, following client-go's reflector.
package httpwatch
