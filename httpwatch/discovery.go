package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/raw"
)

// ErrNamespaceRequired is wrapped by a read or write of a namespaced
// resource's objects with no namespace (neither the client's nor, for
// writes of a whole object, the object's): the server would answer a Get
// or Delete with 404, which IsNotFound would take for "already gone".
var ErrNamespaceRequired = errors.New("the resource is namespaced: a namespace is required")

// checkScope fails with ErrNamespaceRequired when r, addressed without a
// namespace, is namespaced according to discovery. When discovery cannot
// tell (the server has none, or r's group version failed to answer) it
// lets the request go; so it does for a resource discovery does not list,
// whose request then fails with the server's 404, explained (explain).
func (c *Client) checkScope(ctx context.Context, r Resource) error {
	if r.Namespace != "" {
		return nil
	}
	if v, ar, _ := c.discovery.Lookup(ctx, r.Group, r.Version, r.Resource); v == discovery.Served && ar.Namespaced {
		return fmt.Errorf("%s: %w", r, ErrNamespaceRequired)
	}
	return nil
}

// Discover reads the resources the server serves, every version of every
// group, as discovery.Cache.Discover: what answered is kept per group
// version, and the error names what failed (decision 23).
func (c *Client) Discover(ctx context.Context) ([]discovery.APIResource, error) {
	return c.discovery.Discover(ctx)
}

// ResourceFor resolves a resource name as kubectl does ("po",
// "deployments.apps", "deployments.v1.apps"), as
// discovery.Cache.ResourceFor; a name the server does not serve is an
// error wrapping discovery.ErrUnknownResource that suggests the likeliest name.
func (c *Client) ResourceFor(ctx context.Context, name string) (discovery.APIResource, error) {
	return c.discovery.ResourceFor(ctx, name)
}

// fetcher reads the client's discovery documents for its discovery.Cache.
type fetcher struct{ c *Client }

// Fetch reads one discovery document in a single attempt: a document that
// fails is read again later, when due, rather than retried while a
// request waits.
func (f fetcher) Fetch(ctx context.Context, path, accept string) ([]byte, error) {
	c := f.c
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.host.JoinPath(path).String(), nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := c.list.Do(req)
	if err != nil {
		// url.Error repeats the URL; the path is enough.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("%w (%w)", statusFromResponse(http.MethodGet, path, resp, c.clock.Now()), discovery.ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, statusFromResponse(http.MethodGet, path, resp, c.clock.Now())
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxDiscovery+1))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	if len(body) > maxDiscovery {
		return nil, &DecodeError{Verb: http.MethodGet, Path: path, Offset: maxDiscovery, Err: raw.ErrFrameTooLarge}
	}
	if err := raw.Validate(body); err != nil {
		return nil, &DecodeError{Verb: http.MethodGet, Path: path, Err: fmt.Errorf("invalid JSON: %w", err)}
	}
	return body, nil
}

// maxDiscovery bounds one discovery document: a large cluster's aggregated
// list is a few hundred kilobytes.
const maxDiscovery = 32 << 20
