package httpwatch

import (
	"context"
	"fmt"
	"net/http"

	"github.com/listwatch/listwatch/raw"
)

// SubresourceClient reads and writes one subresource of a resource's
// objects, such as "status" or "scale". Create it with
// ResourceClient.Subresource.
//
// The status subresource is the object itself, of which an update or patch
// changes only .status (and a write to the object itself leaves .status
// alone): it is how a controller reports. The scale subresource is an
// autoscaling/v1 Scale ({"spec": {"replicas": 3}}) standing for the
// object's replica count.
//
// Answers are not passed through ResourceClient.Transform nor cut by
// ResourceClient.Projection, which are written for the resource's own kind;
// MetadataOnly does not apply either.
type SubresourceClient struct {
	rc   *ResourceClient
	name string
}

// Subresource returns a client for subresource name of the resource's
// objects, in the client's namespace:
//
//	_, err := deployments.Subresource("status").Update(ctx, data)
//	scale, err := deployments.Subresource("scale").Get(ctx, "web")
func (rc *ResourceClient) Subresource(name string) *SubresourceClient {
	return &SubresourceClient{rc: rc, name: name}
}

// Get reads the subresource of object name.
func (s *SubresourceClient) Get(ctx context.Context, name string) (*raw.Object, error) {
	path, err := s.rc.objectPath(ctx, s.rc.res.Namespace, name, s.name)
	if err != nil {
		return nil, fmt.Errorf("get %q %s: %w", name, s.name, err)
	}
	return s.rc.answering(s.name).objectRequest(ctx, request{method: http.MethodGet, path: path, accept: acceptJSON})
}

// Update replaces the subresource of the object data names (the whole object
// for status, a Scale for scale; metadata.resourceVersion is checked as by
// ResourceClient.Update).
func (s *SubresourceClient) Update(ctx context.Context, data []byte, opts ...WriteOptions) (*raw.Object, error) {
	return s.rc.update(ctx, s.name, data, opts)
}

// Patch patches the subresource of object name, as ResourceClient.Patch.
func (s *SubresourceClient) Patch(ctx context.Context, name string, pt PatchType, patch []byte, opts ...WriteOptions) (*raw.Object, error) {
	return s.rc.patch(ctx, name, s.name, pt, patch, opts)
}

// Apply applies a configuration to the subresource server-side, as
// ResourceClient.Apply.
func (s *SubresourceClient) Apply(ctx context.Context, data []byte, opts ...WriteOptions) (*raw.Object, error) {
	return s.rc.apply(ctx, s.name, data, opts)
}

// answering returns the client that reads answers from subresource sub:
// rc itself for the object ("") and rc without its Transform and
// Projection otherwise.
func (rc *ResourceClient) answering(sub string) *ResourceClient {
	if sub == "" || rc.Transform == nil && rc.Projection == nil {
		return rc
	}
	plain := *rc
	plain.Transform, plain.Projection = nil, nil
	return &plain
}
