package lease

import (
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
)

// RequestError is a failed request on leases: which RBAC verb, on which
// lease ("" for a list) in which namespace. It unwraps to the client's
// error, so httpwatch's predicates (IsForbidden, IsNotFound...) apply.
type RequestError struct {
	Verb      string // get, list, create or update
	Lease     string
	Namespace string
	Err       error
}

func (e *RequestError) Error() string {
	if e.Lease == "" {
		return fmt.Sprintf("%s leases in namespace %s: %v", e.Verb, e.Namespace, e.Err)
	}
	return fmt.Sprintf("%s lease %s/%s: %v", e.Verb, e.Namespace, e.Lease, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// ErrNotServed says the server does not serve coordination.k8s.io/v1
// leases: retrying cannot help, so Run gives up on it.
var ErrNotServed = errors.New("the server does not serve coordination.k8s.io/v1 leases")

// NotServed reports whether err shows the Lease API missing: discovery
// knows no such resource, or a request on the leases collection (a create
// or a list) was answered 404 for another reason than a missing namespace.
// A 404 on one lease only means that lease does not exist.
func NotServed(err error) bool {
	if errors.Is(err, discovery.ErrUnknownResource) {
		return true
	}
	var re *RequestError
	if !errors.As(err, &re) || (re.Verb != "create" && re.Verb != "list") || !httpwatch.IsNotFound(err) {
		return false
	}
	return !namespaceMissing(err)
}

// namespaceMissing reports a 404 about the namespace, not the resource: the
// server names the namespace in the Status details.
func namespaceMissing(err error) bool {
	var se *httpwatch.StatusError
	return errors.As(err, &se) && se.Details.Kind == "namespaces"
}

func requestError(verb string, l *Lease, err error) error {
	return &RequestError{Verb: verb, Lease: l.Name, Namespace: l.Client.Resource().Namespace, Err: err}
}
