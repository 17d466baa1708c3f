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
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/internal/faillog"
)

// SummaryEvery is how often a failure that keeps repeating is logged
// again, with the count of repeats since its last line.
const SummaryEvery = faillog.SummaryEvery

// Reporter tells the user about failed lease requests: every one goes to
// OnError; the log follows package faillog's policy (decision 25), with
// failures told apart by their cause (package cause, decision 38): the first
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
	c := cause.Of(err)
	attrs := append(r.attrs(err), "error", err.Error())
	if c.Class == cause.Routine {
		r.Logger.Debug(r.Who+": lease request lost a race; retrying", attrs...)
		return
	}
	level, advice := slog.LevelWarn, c.HintFor(r.request(err))
	if c.Class == cause.Permanent {
		level = slog.LevelError
	}
	if advice == "" {
		advice = "retrying"
	}
	r.log().Failed(faillog.Failure{
		Key:   c.LogKey(),
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

// request is what a hint about err speaks of: the grant the user needs
// on leases, in the lease's namespace.
func (r *Reporter) request(err error) cause.Request {
	rq := cause.Request{Verb: r.Verbs, Resource: "leases.coordination.k8s.io"}
	var re *RequestError
	if errors.As(err, &re) {
		rq.Namespace = re.Namespace
	}
	return rq
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
