package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/listwatch/listwatch/raw"
)

// PatchType is the format of a patch, named by its media type.
type PatchType string

// The patch formats the API server accepts (server-side apply has its own
// method, Apply).
const (
	// MergePatch is a JSON merge patch (RFC 7386): the object's fields
	// are set to the patch's, null removes one, and lists are replaced
	// whole.
	MergePatch PatchType = "application/merge-patch+json"
	// JSONPatch is a JSON patch (RFC 6902): a list of operations (add,
	// remove, replace, move, copy, test), applied in order; a failed test
	// refuses the whole patch with 422 Invalid.
	JSONPatch PatchType = "application/json-patch+json"
	// StrategicMergePatch is the API server's merge patch that merges the
	// lists of built-in kinds by key (containers by name...) and honours
	// $patch directives. The client passes it through; custom resources
	// refuse it with 415 UnsupportedMediaType.
	StrategicMergePatch PatchType = "application/strategic-merge-patch+json"
)

// applyPatch is the media type of a server-side apply configuration; JSON
// is valid YAML.
const applyPatch = "application/apply-patch+yaml"

// Patch changes object name (in the client's namespace) with a patch of
// type pt and returns the object the server stored. A patch needs no
// resourceVersion: the server applies it to the latest version, so patching
// is the way to change a few fields without a conflict (put
// metadata.resourceVersion in a merge patch to have it checked).
//
//	o, err := cms.Patch(ctx, "settings", httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}}}`))
func (rc *ResourceClient) Patch(ctx context.Context, name string, pt PatchType, patch []byte, opts ...WriteOptions) (*raw.Object, error) {
	return rc.patch(ctx, name, "", pt, patch, opts)
}

func (rc *ResourceClient) patch(ctx context.Context, name, sub string, pt PatchType, patch []byte, opts []WriteOptions) (*raw.Object, error) {
	wo, err := writeOptions(opts, false)
	if err != nil {
		return nil, fmt.Errorf("patch %q: %w", name, err)
	}
	switch pt {
	case MergePatch, JSONPatch, StrategicMergePatch:
	default:
		return nil, fmt.Errorf("patch %q: patch type %q: want MergePatch, JSONPatch or StrategicMergePatch (Apply for an apply)", name, pt)
	}
	if len(patch) == 0 {
		return nil, fmt.Errorf("patch %q: empty patch", name)
	}
	path, err := rc.objectPath(ctx, rc.res.Namespace, name, sub)
	if err != nil {
		return nil, fmt.Errorf("patch %q: %w", name, err)
	}
	rq := request{method: http.MethodPatch, path: path, query: wo.values(), accept: acceptJSON, body: patch, contentType: string(pt)}
	return rc.answering(sub).objectRequest(ctx, rq)
}

// errFieldManagerRequired is wrapped by the error of an Apply without
// WriteOptions.FieldManager, which the server would refuse (422 Invalid).
var errFieldManagerRequired = errors.New("server-side apply needs a field manager")

// Apply applies a configuration server-side: data is a JSON object with
// apiVersion, kind, metadata.name (and the namespace, unless the client has
// one) and the fields the manager WriteOptions.FieldManager wants to own
// (an Apply without one fails before it is sent); the server
// creates the object or merges the configuration into it, and returns what
// it stored. Fields the manager set before and leaves out now are removed.
// A field another manager owns with a different value is a 409 Conflict
// (IsConflict; StatusError.Details.Causes name the fields and owners) unless
// WriteOptions.Force takes it over. Retrying such a conflict changes nothing, so
// do not wrap Apply in RetryOnConflict.
func (rc *ResourceClient) Apply(ctx context.Context, data []byte, opts ...WriteOptions) (*raw.Object, error) {
	return rc.apply(ctx, "", data, opts)
}

func (rc *ResourceClient) apply(ctx context.Context, sub string, data []byte, opts []WriteOptions) (*raw.Object, error) {
	o, err := raw.NewObject(data)
	if err != nil {
		return nil, fmt.Errorf("apply: %w", err)
	}
	ao, err := writeOptions(opts, true)
	if err != nil {
		return nil, fmt.Errorf("apply %q: %w", o.Name(), err)
	}
	if ao.FieldManager == "" {
		return nil, fmt.Errorf("apply %q: %w", o.Name(), errFieldManagerRequired)
	}
	path, err := rc.objectPath(ctx, rc.namespaceFor(o), o.Name(), sub)
	if err != nil {
		return nil, fmt.Errorf("apply %q: %w", o.Name(), err)
	}
	rq := request{method: http.MethodPatch, path: path, query: ao.values(), accept: acceptJSON, body: data, contentType: applyPatch}
	return rc.answering(sub).objectRequest(ctx, rq)
}

// Namespace returns a client for the resource in namespace ns ("" for all
// namespaces, or a cluster-scoped resource), with the same settings.
func (rc *ResourceClient) Namespace(ns string) *ResourceClient {
	c := *rc
	c.res.Namespace = ns
	return &c
}
