package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/internal/faillog"
)

// A failing reconcile is retried for ever, so the log says what is wrong
// once, loudly, by the policy of decision 20 (package faillog) and the
// causes of package cause (decision 38): the first failure of each kind at
// Warn, or at Error with what to do when retrying cannot cure it (a 403
// says which verb to grant on which resource), repeats counted and
// summarised, and one line at Info once every key that failed has
// succeeded. A kind is the request that failed and its cause (patch
// configmaps 403), or the cause alone. Routine causes (a lost race, 409
// Conflict) and reconciles cut off by the end of their context: Debug
// only.

// panicError is a panic in Reconcile, recovered.
type panicError struct {
	key   string
	value any
}

func (e *panicError) Error() string { return fmt.Sprintf("reconcile %q: panic: %v", e.key, e.value) }

// CauseKey names the panic's row of package cause.
func (e *panicError) CauseKey() string { return "panic" }

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
	if c := cause.Of(err); c.Class == cause.Routine { // a lost race (409 Conflict), say
		r.Logger.Debug("reconcile: routine failure ("+c.Key+"); retrying after a backoff", "runner", r.Name, "key", key, "after", after, "err", err)
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

// failure classifies err, key's failure, by its cause.
func (r *Runner) failure(key string, after time.Duration, err error) faillog.Failure {
	c := cause.Of(err)
	f := faillog.Failure{
		Key:   c.LogKey(),
		Level: slog.LevelWarn,
		Msg:   "reconcile failed; retrying after a backoff",
		Again: "reconcile failed",
		Attrs: []any{"runner", r.Name, "key", key, "after", after},
		Err:   err,
	}
	var rq cause.Request
	var se *httpwatch.StatusError
	if errors.As(err, &se) {
		rq = requestOf(se)
		f.Key = fmt.Sprintf("%s %s %s", rq.Verb, rq.Resource, c.LogKey())
		f.Attrs = append(f.Attrs, "verb", rq.Verb, "resource", rq.Resource, "code", se.Code)
	}
	f.Attrs = append(f.Attrs, "err", err)
	if c.Class == cause.Permanent {
		f.Level = slog.LevelError
		f.Msg = "reconcile failed, and retrying will not cure it"
		hint := c.HintFor(rq)
		if hint == "" {
			hint = "the request cannot succeed as it is: see err, and change the program, its configuration or the cluster"
		}
		f.Attrs = append(f.Attrs, "hint", hint)
	}
	return f
}

// requestOf names the request se answered (httpwatch.StatusError.Request);
// one outside resources is named by its path.
func requestOf(se *httpwatch.StatusError) cause.Request {
	verb, resource, namespace := se.Request()
	if resource == "" {
		resource = se.Path
	}
	return cause.Request{Verb: verb, Resource: resource, Namespace: namespace}
}
