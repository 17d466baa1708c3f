package httpwatch

// TEMPORARY: stand-ins for symbols the httpwatch branch provides; deleted at merge.

import (
	"context"
	"errors"
	"syscall"
)

func IsExpired(err error) bool                 { return reasonOrCode(err, "Expired", 410) }
func IsResourceVersionTooLarge(err error) bool { return false }
func IsInternalError(err error) bool           { return reasonOrCode(err, "InternalError", 500) }
func IsConnectionRefused(err error) bool       { return errors.Is(err, syscall.ECONNREFUSED) }

func ListAll(ctx context.Context, l PageLister, opts ListOptions, onPage func(*Page)) (*Page, error) {
	all := &Page{}
	for {
		p, err := l.ListPage(ctx, opts)
		if err != nil {
			return nil, err
		}
		if onPage != nil {
			onPage(p)
		}
		all.Items = append(all.Items, p.Items...)
		all.ResourceVersion = p.ResourceVersion
		if p.Continue == "" {
			return all, nil
		}
		opts.Continue = p.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}

func DropManagedFields(o *Object) (*Object, error) { return o, nil }

func IsNotFound(err error) bool { return reasonOrCode(err, "NotFound", 404) }

func (o *Object) Label(key string) (string, bool) {
	r := o.Get("metadata.labels." + key)
	return r.String(), r.Exists()
}

type Client struct{}
type Resource struct{ Group, Version, Resource, Namespace string }
type Transform func(*Object) (*Object, error)
type ResourceClient struct {
	DropManagedFields bool
	Transform         Transform
	ListerWatcher
}

func (c *Client) Resource(r Resource) *ResourceClient { return &ResourceClient{} }
