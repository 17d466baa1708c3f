package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
)

// SummaryEvery is how often a failure that keeps repeating is logged
// again, with the count of repeats since its last line.
const SummaryEvery = faillog.SummaryEvery

// Reporter tells the user about failed lease requests: every one goes to
// OnError; the log follows package faillog's policy (decision 25), with
// failures told apart by the server's code and reason: the first
// occurrence of each at Warn, or Error for one that will not cure itself
// with what to do, a count of repeats at most every SummaryEvery, and one
// Info line when requests succeed again. Lost races (409) are logged at
// Debug only, so a healthy user of leases logs nothing above Debug.
// Cancellation is not a failure. A Reporter is safe for concurrent use.
type Reporter struct {
	Logger  *slog.Logger
	OnError func(error)
	Clock   clock.Clock
	// Who names the user in every line: "leader election", "shard member".
	Who string
	// Attrs are added to every line (the identity, the group).
	Attrs []any
	// Verbs is what the user needs granted on leases: "get, create and update".
	Verbs string

	once    sync.Once
	tracker faillog.Tracker
}

// Failed reports err, a failed lease request.
func (r *Reporter) Failed(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	if r.OnError != nil {
		r.OnError(err)
	}
	level, advice := r.classify(err)
	attrs := append(r.attrs(err), "error", err.Error())
	if level == slog.LevelDebug {
		r.Logger.Debug(r.Who+": lease request lost a race; retrying", attrs...)
		return
	}
	r.log().Failed(faillog.Failure{
		Key:   kind(err),
		Level: level,
		Msg:   r.Who + ": " + describe(err) + "; " + advice,
		Again: r.Who + ": lease requests failed",
		Attrs: attrs,
		Err:   err,
	})
}

// Succeeded notes a lease request that got through; after failures it
// logs the recovery once, at Info.
func (r *Reporter) Succeeded() {
	r.log().Recovered(r.Who+": lease requests succeed again", r.Attrs...)
}

func (r *Reporter) log() *faillog.Tracker {
	r.once.Do(func() { r.tracker.Logger, r.tracker.Clock = r.Logger, r.Clock })
	return &r.tracker
}

func (r *Reporter) attrs(err error) []any {
	out := append([]any(nil), r.Attrs...)
	var re *RequestError
	if errors.As(err, &re) {
		out = append(out, "verb", re.Verb)
		if re.Lease != "" {
			out = append(out, "lease", re.Lease)
		}
		out = append(out, "namespace", re.Namespace)
	}
	return out
}

// classify gives the level of err's first line and what to do about it.
func (r *Reporter) classify(err error) (slog.Level, string) {
	ns := "its namespace"
	var re *RequestError
	if errors.As(err, &re) {
		ns = "namespace " + re.Namespace
	}
	switch {
	case lostRace(err):
		return slog.LevelDebug, ""
	case NotServed(err):
		return slog.LevelError, "the server does not serve coordination.k8s.io/v1 leases (Kubernetes 1.14 and later do): this will never work against it"
	case httpwatch.IsUnauthorized(err):
		return slog.LevelError, "the server refused the credentials: check the token, certificate or kubeconfig in use"
	case httpwatch.IsForbidden(err):
		return slog.LevelError, "grant " + r.Verbs + " on leases.coordination.k8s.io in " + ns + " to this program's user or service account (a Role and a RoleBinding)"
	case namespaceMissing(err):
		return slog.LevelError, "create " + ns + ", or keep the leases in a namespace that exists"
	case errors.Is(err, ErrForeign):
		return slog.LevelError, "another user of " + ns + " made a lease of this name: choose another name"
	case httpwatch.IsPermanent(err):
		return slog.LevelError, "the server refuses this request as it is: it will not work until the program or the cluster changes"
	}
	return slog.LevelWarn, "retrying"
}

// lostRace reports a 409: a write that met a newer resourceVersion
// (Conflict) or a create that met an existing lease (AlreadyExists), what
// competing users of a lease do all the time.
func lostRace(err error) bool {
	var se *httpwatch.StatusError
	return httpwatch.IsConflict(err) || errors.As(err, &se) && se.Code == http.StatusConflict
}

// kind tells distinct failures apart: the server's code and reason, or the
// kind of error when the server gave none. The verb is left out: a 403 on
// get and one on list have one cure, and a line each would be noise.
func kind(err error) string {
	var se *httpwatch.StatusError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%d %s", se.Code, se.Reason)
	case errors.Is(err, ErrForeign):
		return "foreign"
	case errors.Is(err, ErrHeld):
		return "held"
	}
	return "transport"
}

// describe says which request failed and how, in a few words.
func describe(err error) string {
	var re *RequestError
	what := "a lease request failed"
	if errors.As(err, &re) {
		if re.Lease == "" {
			what = fmt.Sprintf("cannot %s leases in namespace %s", re.Verb, re.Namespace)
		} else {
			what = fmt.Sprintf("cannot %s lease %s/%s", re.Verb, re.Namespace, re.Lease)
		}
	}
	var se *httpwatch.StatusError
	switch {
	case errors.As(err, &se) && se.Code != 0:
		return fmt.Sprintf("%s: %d %s", what, se.Code, http.StatusText(se.Code))
	case errors.Is(err, ErrForeign):
		return what + ": " + ErrForeign.Error()
	case errors.Is(err, ErrHeld):
		return what + ": " + ErrHeld.Error()
	}
	return what
}
