package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/listwatch/listwatch/raw"
)

// Resource names a collection on the server: group, version and resource
// (plural, lower case, as in the URL) and optionally a namespace. The core
// group is Group "" (paths /api/v1/...); every other group is served under
// /apis/GROUP/VERSION/.... Namespace "" addresses all namespaces of a
// namespaced resource, or a cluster-scoped one.
type Resource struct {
	Group, Version, Resource, Namespace string
}

// String names the resource as kubectl's resource.version.group, e.g.
// "pods.v1" or "deployments.v1.apps"; the namespace is left out.
func (r Resource) String() string {
	var b strings.Builder
	b.WriteString(r.Resource)
	b.WriteByte('.')
	b.WriteString(r.Version)
	if r.Group != "" {
		b.WriteByte('.')
		b.WriteString(r.Group)
	}
	return b.String()
}

// Accept headers. Metadata-only mode asks the server to convert objects to
// PartialObjectMetadata (just apiVersion, kind and metadata), as client-go's
// metadata client and kube-rs's metadata watcher do; plain JSON follows as a
// fallback for a server that cannot convert.
const (
	acceptJSON       = "application/json"
	acceptMetaList   = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
	acceptMetaObject = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
)

// ResourceClient reads and writes one resource. It satisfies ListerWatcher.
// Set its fields before first use; it is then safe for concurrent use.
type ResourceClient struct {
	// MetadataOnly asks the server for PartialObjectMetadata instead of
	// whole objects: lists, watches and gets return objects holding only
	// apiVersion, kind and metadata (labels, owners, ...), a fraction of the
	// memory. Writes are unaffected.
	MetadataOnly bool
	// KeepManagedFields keeps metadata.managedFields, which the client
	// otherwise drops from every object while copying it out of the read
	// buffer, at no extra cost: they are often a third of an object and
	// needed by almost no reader (decision 5).
	KeepManagedFields bool
	// Projection, if set, keeps only the fields it names of every object
	// the client returns (those Transform sees), cutting the rest while
	// copying it out of the read buffer; see raw.Projection for the cost.
	Projection *raw.Projection
	// Transform, if set, rewrites every object the client returns (list
	// items, watch objects except bookmarks and errors, Get and write
	// results, but not a subresource's answers) once, as it is read: the one
	// place objects are transformed before anything caches them.
	Transform raw.Transform

	c   *Client
	res Resource
}

// Resource returns a client for one resource. Its name is checked on the
// first request: one the server does not serve (a misspelt resource, a
// group version it lacks) fails every request with an error wrapping
// discovery.ErrUnknownResource, which suggests the likely name.
func (c *Client) Resource(r Resource) *ResourceClient {
	return &ResourceClient{c: c, res: r}
}

// Resource returns the resource this client addresses.
func (rc *ResourceClient) Resource() Resource { return rc.res }

// Info says which resource the client reads; it can always try a
// watch-list stream (a server that refuses one is listed instead).
func (rc *ResourceClient) Info() SourceInfo { return SourceInfo{Resource: rc.res, WatchList: true} }

// collectionPath is the escaped URL path of the collection in namespace ns.
func (r Resource) collectionPath(ns string) (string, error) {
	for _, s := range []struct{ what, v string }{
		{"group", r.Group}, {"version", r.Version}, {"resource", r.Resource}, {"namespace", ns},
	} {
		if strings.ContainsAny(s.v, "/?#") || s.v == "." || s.v == ".." {
			return "", fmt.Errorf("resource %s %q: not a path segment", s.what, s.v)
		}
	}
	if r.Version == "" || r.Resource == "" {
		return "", fmt.Errorf("resource %q, version %q, group %q: version and resource are required", r.Resource, r.Version, r.Group)
	}
	var b strings.Builder
	if r.Group == "" {
		b.WriteString("/api/")
	} else {
		b.WriteString("/apis/")
		b.WriteString(url.PathEscape(r.Group))
		b.WriteByte('/')
	}
	b.WriteString(url.PathEscape(r.Version))
	if ns != "" {
		b.WriteString("/namespaces/")
		b.WriteString(url.PathEscape(ns))
	}
	b.WriteByte('/')
	b.WriteString(url.PathEscape(r.Resource))
	return b.String(), nil
}

// Path is the escaped URL path of the collection, e.g.
// "/api/v1/namespaces/default/pods" or "/apis/apps/v1/deployments".
func (r Resource) Path() (string, error) { return r.collectionPath(r.Namespace) }

func itemPath(collection, name string) (string, error) {
	if name == "" || strings.ContainsAny(name, "/?#") || name == "." || name == ".." {
		return "", fmt.Errorf("object name %q: not a path segment", name)
	}
	return collection + "/" + url.PathEscape(name), nil
}

// decoder is how the client's responses become objects.
func (rc *ResourceClient) decoder() *raw.Decoder {
	return &raw.Decoder{MaxFrameSize: rc.c.MaxFrameSize, DropManagedFields: !rc.KeepManagedFields, Projection: rc.Projection, Transform: rc.Transform}
}

// ListPage reads one page of the list: a single request with opts (Limit 0
// or less asks for everything at once). The body is scanned item by item;
// objects are copied out and the read buffer is recycled before ListPage
// returns.
func (rc *ResourceClient) ListPage(ctx context.Context, opts ListOptions) (*Page, error) {
	path, err := rc.res.Path()
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	accept := acceptJSON
	if rc.MetadataOnly {
		accept = acceptMetaList
	}
	resp, err := rc.send(ctx, request{method: http.MethodGet, path: path, query: opts.Values(false), accept: accept})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	list, err := rc.decoder().DecodeList(resp.Body, int(min(max(opts.Limit, 0), maxSizeHint)))
	if err != nil {
		return nil, requestError(http.MethodGet, path, err)
	}
	return (*Page)(list), nil
}

// maxSizeHint bounds the item slice ListPage allocates up front from the
// limit asked for (a page is usually full, so this saves regrowing it).
const maxSizeHint = 10000

// requestError names the request in a body error, as a *DecodeError when
// the body was malformed.
func requestError(verb, path string, err error) error {
	var ie *raw.InputError
	if errors.As(err, &ie) {
		return &DecodeError{Verb: verb, Path: path, Offset: ie.Offset, Err: ie.Err}
	}
	return fmt.Errorf("%s %s: %w", verb, path, err)
}

// List reads the whole list, following continue tokens (see ListAll).
func (rc *ResourceClient) List(ctx context.Context, opts ListOptions) (*Page, error) {
	return ListAll(ctx, rc, opts, nil)
}

// Get reads one object by name (in the client's namespace). A namespaced
// resource needs one: without it Get fails with ErrNamespaceRequired (when
// the server's discovery says the resource is namespaced).
func (rc *ResourceClient) Get(ctx context.Context, name string) (*raw.Object, error) {
	path, err := rc.objectPath(ctx, rc.res.Namespace, name, "")
	if err != nil {
		return nil, fmt.Errorf("get %q: %w", name, err)
	}
	accept := acceptJSON
	if rc.MetadataOnly {
		accept = acceptMetaObject
	}
	return rc.objectRequest(ctx, request{method: http.MethodGet, path: path, accept: accept})
}

// Create posts a new object (raw JSON) and returns what the server stored
// (or, with DryRun, would store). The namespace is the client's or, when
// that is "", the object's own; a namespaced resource needs one
// (ErrNamespaceRequired).
func (rc *ResourceClient) Create(ctx context.Context, data []byte, opts ...WriteOptions) (*raw.Object, error) {
	o, err := raw.NewObject(data)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	wo, err := writeOptions(opts, false)
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	r := rc.res
	r.Namespace = rc.namespaceFor(o)
	coll, err := r.Path()
	if err != nil {
		return nil, fmt.Errorf("create: %w", err)
	}
	if err := rc.c.checkScope(ctx, r); err != nil {
		return nil, fmt.Errorf("create %q: %w", o.Name(), err)
	}
	return rc.objectRequest(ctx, request{method: http.MethodPost, path: coll, query: wo.values(), accept: acceptJSON, body: data})
}

// Update replaces an object (raw JSON, named by its metadata.name; include
// metadata.resourceVersion for optimistic concurrency, a conflict is a 409
// IsConflict error) and returns what the server stored. The namespace is
// the client's or the object's, as for Create.
func (rc *ResourceClient) Update(ctx context.Context, data []byte, opts ...WriteOptions) (*raw.Object, error) {
	return rc.update(ctx, "", data, opts)
}

// update puts data to the object it names, or to its subresource sub.
func (rc *ResourceClient) update(ctx context.Context, sub string, data []byte, opts []WriteOptions) (*raw.Object, error) {
	o, err := raw.NewObject(data)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	wo, err := writeOptions(opts, false)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	path, err := rc.objectPath(ctx, rc.namespaceFor(o), o.Name(), sub)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	rq := request{method: http.MethodPut, path: path, query: wo.values(), accept: acceptJSON, body: data}
	return rc.answering(sub).objectRequest(ctx, rq)
}

// Delete deletes an object by name (in the client's namespace; see Get).
// Without options it sends no body and the server applies the resource's
// defaults. A delete that leaves the object in place, with a
// deletionTimestamp, until its finalizers are removed (Foreground, or
// finalizers of its own) succeeds as one that removed it.
func (rc *ResourceClient) Delete(ctx context.Context, name string, opts ...DeleteOptions) error {
	del, err := optional(opts)
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	body, err := del.body()
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	path, err := rc.objectPath(ctx, rc.res.Namespace, name, "")
	if err != nil {
		return fmt.Errorf("delete %q: %w", name, err)
	}
	return rc.discardRequest(ctx, request{method: http.MethodDelete, path: path, accept: acceptJSON, body: body}, true)
}

// DeleteCollection deletes every object of the collection (in the client's
// namespace, which a namespaced resource needs) that the label and field
// selectors of list match, with the delete options, if any, for each.
func (rc *ResourceClient) DeleteCollection(ctx context.Context, list ListOptions, opts ...DeleteOptions) error {
	path, err := rc.res.Path()
	if err != nil {
		return fmt.Errorf("delete collection: %w", err)
	}
	del, err := optional(opts)
	if err != nil {
		return fmt.Errorf("delete collection: %w", err)
	}
	body, err := del.body()
	if err != nil {
		return fmt.Errorf("delete collection: %w", err)
	}
	if err := rc.c.checkScope(ctx, rc.res); err != nil {
		return fmt.Errorf("delete collection: %w", err)
	}
	return rc.discardRequest(ctx, request{method: http.MethodDelete, path: path, query: list.Values(false), accept: acceptJSON, body: body}, false)
}

// discardRequest sends a request whose answer is not needed (a Status, or
// the deleted objects). The answer is read, so the connection can be used
// again, up to MaxFrameSize like any other object: past it, oneObject
// makes the call fail with raw.ErrFrameTooLarge, as Get would; otherwise (the
// list a DeleteCollection answers, which may be long) reading just stops,
// since the server has done the delete once it answers 2xx.
func (rc *ResourceClient) discardRequest(ctx context.Context, rq request, oneObject bool) error {
	resp, err := rc.send(ctx, rq)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	max := rc.c.maxFrameSize()
	n, err := io.Copy(io.Discard, io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return fmt.Errorf("%s %s: read response: %w", rq.method, rq.path, err)
	}
	if n > int64(max) && oneObject {
		return &DecodeError{Verb: rq.method, Path: rq.path, Offset: int64(max), Err: raw.ErrFrameTooLarge}
	}
	return nil
}

// maxFrameSize is MaxFrameSize, or its default when unset.
func (c *Client) maxFrameSize() int {
	if c.MaxFrameSize <= 0 {
		return raw.DefaultMaxFrameSize
	}
	return c.MaxFrameSize
}

// objectPath is the escaped URL path of object name in namespace ns, or of
// its subresource sub; it fails with ErrNamespaceRequired when the
// resource is namespaced and ns is "".
func (rc *ResourceClient) objectPath(ctx context.Context, ns, name, sub string) (string, error) {
	coll, err := rc.res.collectionPath(ns)
	if err != nil {
		return "", err
	}
	path, err := itemPath(coll, name)
	if err != nil {
		return "", err
	}
	if sub != "" {
		if path, err = itemPath(path, sub); err != nil {
			return "", fmt.Errorf("subresource: %w", err)
		}
	}
	r := rc.res
	r.Namespace = ns
	if err := rc.c.checkScope(ctx, r); err != nil {
		return "", err
	}
	return path, nil
}

func (rc *ResourceClient) namespaceFor(o *raw.Object) string {
	if rc.res.Namespace != "" {
		return rc.res.Namespace
	}
	return o.Namespace()
}

// objectRequest sends a request whose response is one object.
func (rc *ResourceClient) objectRequest(ctx context.Context, rq request) (*raw.Object, error) {
	resp, err := rc.send(ctx, rq)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	max := rc.c.maxFrameSize()
	body, err := io.ReadAll(io.LimitReader(resp.Body, int64(max)+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: read response: %w", rq.method, rq.path, err)
	}
	if len(body) > max {
		return nil, &DecodeError{Verb: rq.method, Path: rq.path, Offset: int64(max), Err: raw.ErrFrameTooLarge}
	}
	o, err := rc.decoder().Decode(body)
	if err != nil {
		return nil, &DecodeError{Verb: rq.method, Path: rq.path, Err: err}
	}
	return o, nil
}
