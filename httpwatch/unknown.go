package httpwatch

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/listwatch/listwatch/discovery"
)

// send is c.do for a request on rc's resource, with a 404 explained.
func (rc *ResourceClient) send(ctx context.Context, rq request) (*http.Response, error) {
	resp, err := rc.c.do(ctx, rq)
	if err != nil {
		return nil, rc.explain(ctx, err)
	}
	return resp, nil
}

// explain tells what a 404 that names no object means. The server answers
// a missing object with a Status naming it (details.name), which stays a
// NotFound error: the object is gone. Any other 404 is the server having no
// handler for the path: the resource is misspelt, not served, or namespaced
// and addressed without a namespace, and must not read as "gone". Discovery
// says which, and suggests the likely name; when it cannot tell (the server
// has none, or the group version failed to answer) the error still wraps
// discovery.ErrUnknownResource and says why it could not check.
func (rc *ResourceClient) explain(ctx context.Context, err error) error {
	se, ok := asStatus(err)
	if !ok || se.Code != http.StatusNotFound || se.Details.Name != "" {
		return err
	}
	r := rc.res
	v, ar, why := rc.c.discovery.Lookup(ctx, r.Group, r.Version, r.Resource)
	var msg string
	switch {
	case v == discovery.NotServed:
		return &explained{fmt.Sprintf("%s %s: %s", se.Verb, se.Path, why), []error{why, se}}
	case v == discovery.Served && ar.Namespaced && rc.unnamespaced(se.Path):
		return &explained{fmt.Sprintf("%s %s: %s: %s", se.Verb, se.Path, r, ErrNamespaceRequired), []error{ErrNamespaceRequired, se}}
	case v == discovery.Served:
		msg = fmt.Sprintf("the server serves %s but not this path (%s)", r, se.Message)
	default:
		msg = fmt.Sprintf("404 %s: %s is misspelt, not served, "+
			"or namespaced and addressed without a namespace (discovery cannot tell which: %v)", se.Message, r, why)
	}
	return &explained{fmt.Sprintf("%s %s: %s: %s", se.Verb, se.Path, msg, discovery.ErrUnknownResource), []error{discovery.ErrUnknownResource, se}}
}

// explained is a server's error told in terms of what discovery knows. It
// wraps both the explanation's sentinel and the server's *StatusError, for
// errors.As; IsNotFound declines it.
type explained struct {
	msg  string
	errs []error
}

func (e *explained) Error() string   { return e.msg }
func (e *explained) Unwrap() []error { return e.errs }

// unnamespaced reports whether path addresses rc's resource without a
// namespace.
func (rc *ResourceClient) unnamespaced(path string) bool {
	coll, err := rc.res.collectionPath("")
	return err == nil && (path == coll || strings.HasPrefix(path, coll+"/"))
}
