package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
)

// A failing reconcile is retried for ever, so the log says what is wrong
// once, loudly, by the policy of decision 20 (package faillog): the first
// failure of each kind at Warn, or at Error with what to do when retrying
// cannot cure it (httpwatch.IsPermanent: a 403 says which verb to grant on
// which resource), repeats counted and summarised, and one line at Info
// once every key that failed has succeeded. A kind is the request that
// failed and the server's code (PATCH configmaps 403), or the class of
// the error. Lost races (409 Conflict) and reconciles cut off by the end
// of their context are routine: Debug only.

// panicError is a panic in Reconcile, recovered.
type panicError struct {
	key   string
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("reconcile %q: panic: %v", e.key, e.value) }

// IsPanic reports whether err, as OnError sees it, is a panic in
// Reconcile that the runner recovered, for a count of panics apart from
// the other failures (Observe reports both as Error).
func IsPanic(err error) bool {
	var pe *panicError
	return errors.As(err, &pe)
}

// failed reports the failure of key's reconcile, retried after after.
func (r *Runner) failed(ctx context.Context, key string, after time.Duration, err error) {
	r.mu.Lock()
	r.failing[key] = true
	r.mu.Unlock()
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		r.Logger.Debug("reconcile: cut off by the end of its context", "runner", r.Name, "key", key, "err", err)
		return
	}
	if r.OnError != nil {
		r.OnError(key, err)
	}
	if httpwatch.IsConflict(err) {
		r.Logger.Debug("reconcile: lost a race (409 Conflict); retrying after a backoff", "runner", r.Name, "key", key, "after", after, "err", err)
		return
	}
	r.failures.Failed(r.failure(key, after, err))
}

// succeeded notes that key's reconcile worked; once no key is failing,
// the recovery is said once.
func (r *Runner) succeeded(key string) {
	r.mu.Lock()
	delete(r.failing, key)
	healthy := len(r.failing) == 0
	r.mu.Unlock()
	if healthy {
		r.failures.Recovered("reconcile: reconciles succeed again", "runner", r.Name)
	}
}

// failure classifies err, key's failure.
func (r *Runner) failure(key string, after time.Duration, err error) faillog.Failure {
	f := faillog.Failure{
		Level: slog.LevelWarn,
		Msg:   "reconcile failed; retrying after a backoff",
		Again: "reconcile failed",
		Attrs: []any{"runner", r.Name, "key", key, "after", after},
		Err:   err,
	}
	var hint string
	var pe *panicError
	var se *httpwatch.StatusError
	switch {
	case errors.As(err, &pe):
		f.Key, f.Level = "panic", slog.LevelError
		hint = "fix the reconcile function: it panicked (recovered; the key is retried after a backoff)"
	case errors.As(err, &se):
		rq := requestOf(se)
		f.Key = fmt.Sprintf("%s %s %d", rq.verb, rq.resource, se.Code)
		f.Attrs = append(f.Attrs, "verb", rq.verb, "resource", rq.resource, "code", se.Code)
		if permanent(err) {
			f.Level, hint = slog.LevelError, rq.hint(se)
		}
	case httpwatch.IsConnectionRefused(err):
		f.Key = "connection refused"
	case httpwatch.IsProbableEOF(err):
		f.Key = "connection lost"
	default:
		f.Key = fmt.Sprintf("%T", innermost(err))
		if permanent(err) {
			f.Level = slog.LevelError
			hint = "the request cannot succeed as it is: see err, and change the program, its configuration or the cluster"
		}
	}
	f.Attrs = append(f.Attrs, "err", err)
	if hint != "" {
		f.Msg = "reconcile failed, and retrying will not cure it"
		f.Attrs = append(f.Attrs, "hint", hint)
	}
	return f
}

// permanent is httpwatch.IsPermanent, except for a 404 on one object: the
// object is missing, which a reconcile may well see cured.
func permanent(err error) bool {
	var se *httpwatch.StatusError
	if errors.As(err, &se) && httpwatch.IsNotFound(err) && se.Details.Name != "" {
		return false
	}
	return httpwatch.IsPermanent(err)
}

func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// request is what RBAC calls a request: its verb, and the resource
// ("configmaps", "deployments.apps/status") in its namespace.
type request struct {
	verb, resource, namespace string
}

// requestOf names the request se answered (httpwatch.StatusError.Request);
// one outside resources is named by its path.
func requestOf(se *httpwatch.StatusError) request {
	var rq request
	rq.verb, rq.resource, rq.namespace = se.Request()
	if rq.resource == "" {
		rq.resource = se.Path
	}
	return rq
}

// hint says what to do about se, a permanent failure of rq.
func (rq request) hint(se *httpwatch.StatusError) string {
	switch {
	case httpwatch.IsForbidden(se):
		where, binding := "at cluster scope", "a ClusterRole and a ClusterRoleBinding"
		if rq.namespace != "" {
			where, binding = "in namespace "+rq.namespace, "a Role and a RoleBinding"
		}
		return fmt.Sprintf("check RBAC: grant %s on %s %s to this program's user or service account (%s)", rq.verb, rq.resource, where, binding)
	case httpwatch.IsUnauthorized(se):
		return "check the credentials: the server does not accept them (expired or wrong token, certificate?)"
	case httpwatch.IsNotFound(se):
		return "check the resource name, version and group: the server does not serve " + rq.resource
	case se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity:
		return "the server refuses what the reconcile sends: see message, and fix the object or the request"
	}
	return "the server refuses this request as it is: it will not work until the program or the cluster changes"
}
