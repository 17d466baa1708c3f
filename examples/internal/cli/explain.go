package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/redact"
)

// Explain turns an error that ended a first sync into one line a person can
// act on; host is the server's URL, shown without any password in it.
// Errors it does not know come back as they are. The server's own error,
// which names the request and so the resource, stays wrapped except after a
// 401, where it adds nothing.
func Explain(err error, host string) error {
	host = redact.URL(host)
	switch {
	case httpwatch.IsUnauthorized(err):
		return fmt.Errorf("the server at %s did not accept the credentials (401 Unauthorized): check --token, --token-file or the kubeconfig user", host)
	case httpwatch.IsForbidden(err):
		return fmt.Errorf("not allowed (403 Forbidden): the user or service account needs get, list and watch on the resource: %w", err)
	case httpwatch.IsNotFound(err):
		return fmt.Errorf("the server has no such resource (404 NotFound); check its plural, version and group: %w", err)
	case httpwatch.IsConnectionRefused(err) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cannot reach the server at %s: %w", host, err)
	}
	return err
}
