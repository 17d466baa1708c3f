package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
)

// SummaryEvery is how often a failure that keeps repeating is logged
// again, with the count of repeats since its last line.
const SummaryEvery = 5 * time.Minute

// Reporter tells the user about failed lease requests: every one goes to
// OnError; the log gets the first occurrence of each distinct failure
// (Warn, or Error for one that will not cure itself, with what to do), a
// count of repeats at most every SummaryEvery, and one Info line when
// requests succeed again. Lost races (409) are logged at Debug only, so a
// healthy user of leases logs nothing above Debug. Cancellation is not a
// failure. A Reporter is safe for concurrent use.
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

	mu       sync.Mutex
	seen     map[string]bool // distinct failures since the last success
	failures int             // failures since the last success
	repeats  int             // failures not logged since the last line
	last     time.Time       // when the last failure line was written
	level    slog.Level      // of the last failure line
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
	r.mu.Lock()
	key := kind(err)
	first := !r.seen[key]
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[key] = true
	r.failures++
	now := r.Clock.Now()
	var repeats int
	switch {
	case first:
		repeats, r.repeats, r.last, r.level = r.repeats, 0, now, max(level, r.level)
	case now.Sub(r.last) >= SummaryEvery:
		repeats, r.repeats, r.last, level = r.repeats+1, 0, now, r.level
	default:
		r.repeats++
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	if first {
		if repeats > 0 {
			attrs = append(attrs, "earlierRepeats", repeats)
		}
		r.Logger.Log(context.Background(), level, r.Who+": "+describe(err)+"; "+advice, attrs...)
		return
	}
	r.Logger.Log(context.Background(), level, fmt.Sprintf("%s: lease requests still failing, %d times since the last report", r.Who, repeats), attrs...)
}

// Succeeded notes a lease request that got through; after failures it
// logs the recovery once, at Info.
func (r *Reporter) Succeeded() {
	r.mu.Lock()
	n := r.failures
	r.seen, r.failures, r.repeats, r.level = nil, 0, 0, 0
	r.mu.Unlock()
	if n > 0 {
		r.Logger.Info(fmt.Sprintf("%s: lease requests succeed again after %d failures", r.Who, n), r.Attrs...)
	}
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
