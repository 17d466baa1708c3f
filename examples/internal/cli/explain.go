package cli

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/redact"
)

// Explained is an error told in one line a person can act on. The error it
// explains stays wrapped, for errors.Is and for -v, which prints it.
type Explained struct {
	Summary string
	Err     error
}

func (e *Explained) Error() string { return e.Summary }
func (e *Explained) Unwrap() error { return e.Err }

// Explain turns an error that ended a first sync into an *Explained; host
// is the server's URL, shown without any password in it. Errors it does
// not know come back as they are.
func Explain(err error, host string) error {
	host = redact.URL(host)
	var summary string
	switch {
	case httpwatch.IsUnauthorized(err):
		summary = fmt.Sprintf("the server at %s did not accept the credentials (401 Unauthorized): check --token-file or the kubeconfig user", host)
	case httpwatch.IsForbidden(err):
		summary = "not allowed (403 Forbidden): the user or service account needs get, list and watch on the resource"
	case httpwatch.IsNotFound(err):
		summary = "the server has no such resource (404 NotFound); check its name, version and group"
	case errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, context.DeadlineExceeded):
		summary = fmt.Sprintf("cannot reach the server at %s", host)
	default:
		return err
	}
	return &Explained{Summary: summary, Err: err}
}
