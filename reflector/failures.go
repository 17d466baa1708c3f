package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
)

// A reflector retries every failure for ever, so the log must say what is
// wrong once, loudly, and then stay readable (decision 20):
//
//   - the first occurrence of a failure (its operation and class, see
//     failureKey) is logged at Warn, or at Error with what to do when
//     retrying cannot cure it (httpwatch.IsPermanent);
//   - repeats are counted, and summarised in one line per key at most every
//     repeatSummaryEvery, never one line per retry;
//   - the first sync or watch event after a logged failure is logged once at
//     Info, with the count of failures not yet summarised;
//   - routine errors (see SyncError.Routine) stay at Debug.
//
// The tracker belongs to Run's goroutine, which alone reports errors.

// repeatSummaryEvery is the shortest time between two lines about one
// failure: with the default backoff capped at 30 s, about ten retries.
const repeatSummaryEvery = 5 * time.Minute

// maxFailureKeys bounds the failures remembered at once: a server sending
// ever new codes cannot grow the tracker.
const maxFailureKeys = 32

// failureKey is what makes two failures "the same": list or watch (a
// watch-list is a way of listing, and a watch start a way of watching), and
// the class of the error.
type failureKey struct {
	listing bool
	class   string
}

// failureRun is one failureKey's history since it was last logged.
type failureRun struct {
	level    slog.Level
	lastLine time.Time // when a line above Debug last named this failure
	repeats  int       // occurrences since then
	last     error     // the latest occurrence
}

type failures struct {
	runs map[failureKey]*failureRun
	// announced is when the last recovery line was written: a failure
	// logged after it makes the next recovery worth a line.
	announced time.Time
	logged    bool // a line above Debug was written since announced
}

// routine reports whether err is part of normal operation for op: the
// reflector relists or resumes and nothing is wrong.
func routine(op Op, err error) bool {
	switch {
	case versionUnavailable(err): // a relist after 410 or a compacted version
		return true
	case errors.Is(err, ErrNoInitialEventsEnd): // a paged list follows
		return true
	case op == OpWatch && httpwatch.IsProbableEOF(err): // a cut watch resumes
		return true
	}
	return false
}

func keyOf(op Op, err error) failureKey {
	k := failureKey{listing: op == OpList || op == OpWatchList}
	se, isStatus := asStatus(err)
	switch {
	case errors.Is(err, httpwatch.ErrUnknownResource):
		k.class = "unknown resource"
	case errors.Is(err, httpwatch.ErrNamespaceRequired):
		k.class = "namespace required"
	case isStatus:
		k.class = fmt.Sprint(se.Code)
	case httpwatch.IsConnectionRefused(err):
		k.class = "connection refused"
	case httpwatch.IsProbableEOF(err):
		k.class = "connection lost"
	case errors.Is(err, ErrVeryShortWatch):
		k.class = "very short watch"
	case errors.Is(err, ErrUnexpectedKind):
		k.class = "unexpected kind"
	default:
		k.class = fmt.Sprintf("%s %T", op, errors.Unwrap(err))
	}
	return k
}

// logFailure writes what e deserves in the log, and nothing more.
func (r *Reflector) logFailure(e *SyncError) {
	if e.Routine {
		r.logger().Debug("reflector: routine error", r.attrs(e)...)
		return
	}
	f := &r.failures
	if f.runs == nil {
		f.runs = map[failureKey]*failureRun{}
	}
	now := r.clock().Now()
	k := keyOf(e.Op, e.Err)
	run, seen := f.runs[k]
	if !seen {
		if len(f.runs) >= maxFailureKeys {
			f.forgetOldest()
		}
		run = &failureRun{level: slog.LevelWarn}
		if httpwatch.IsPermanent(e.Err) {
			run.level = slog.LevelError
		}
		run.lastLine, run.last = now, e.Err
		f.runs[k] = run
		f.logged = true
		attrs := r.attrs(e)
		if hint := r.hint(e); hint != "" {
			attrs = append(attrs, "hint", hint)
		}
		r.logger().Log(context.Background(), run.level, "reflector: "+e.Op.String()+" failed", attrs...)
		return
	}
	run.repeats++
	run.last = e.Err
	if now.Sub(run.lastLine) < repeatSummaryEvery {
		r.logger().Debug("reflector: failed again", r.attrs(e)...)
		return
	}
	attrs := append(r.attrs(e), "repeats", run.repeats, "since", run.lastLine)
	r.logger().Log(context.Background(), run.level, fmt.Sprintf("reflector: %s failed %d more times since %s",
		e.Op, run.repeats, run.lastLine.Format(time.RFC3339)), attrs...)
	run.repeats, run.lastLine = 0, now
	f.logged = true
}

// recovered records that the server answered a list or watch as it should.
// After a logged failure it writes one line at Info; failures older than
// repeatSummaryEvery are forgotten, so their next occurrence is news again,
// while one that flaps within that time stays counted.
func (r *Reflector) recovered() {
	f := &r.failures
	if len(f.runs) == 0 {
		return
	}
	now := r.clock().Now()
	if f.logged {
		failed := 0
		var last error
		var lastAt time.Time
		for _, run := range f.runs {
			failed += run.repeats
			if !run.lastLine.Before(lastAt) {
				last, lastAt = run.last, run.lastLine
			}
		}
		r.logger().Info("reflector: recovered", "resource", r.Name,
			"unreported_failures", failed, "last_error", last)
		f.logged, f.announced = false, now
	}
	for k, run := range f.runs {
		if now.Sub(run.lastLine) >= repeatSummaryEvery {
			delete(f.runs, k)
		}
	}
}

func (f *failures) forgetOldest() {
	var oldest failureKey
	var at time.Time
	for k, run := range f.runs {
		if at.IsZero() || run.lastLine.Before(at) {
			oldest, at = k, run.lastLine
		}
	}
	delete(f.runs, oldest)
}

// attrs names the resource, the request and the server's answer. Nothing
// here can hold a credential: the client redacts status bodies, and no
// header is logged.
func (r *Reflector) attrs(e *SyncError) []any {
	attrs := []any{"resource", r.Name, "op", e.Op.String()}
	var verb, path string
	switch e.Op {
	case OpList:
		verb, path = "GET", r.path()
	case OpWatchList, OpWatchStart, OpWatch:
		verb, path = "WATCH", r.path()
	}
	se, isStatus := asStatus(e.Err)
	if isStatus && se.Verb != "" {
		verb, path = se.Verb, se.Path
	}
	if verb != "" {
		attrs = append(attrs, "verb", verb)
	}
	if path != "" {
		attrs = append(attrs, "path", path)
	}
	if !isStatus {
		return append(attrs, "err", e.Err)
	}
	attrs = append(attrs, "code", se.Code, "reason", se.Reason, "message", se.Message)
	if errors.Is(e.Err, httpwatch.ErrUnknownResource) || errors.Is(e.Err, httpwatch.ErrNamespaceRequired) {
		// The server's message for a path it has no handler for is
		// generic; the client's explanation names the likely resource.
		attrs = append(attrs, "err", e.Err)
	}
	return attrs
}

func asStatus(err error) (*httpwatch.StatusError, bool) {
	var se *httpwatch.StatusError
	ok := errors.As(err, &se)
	return se, ok
}

// path is the collection the Source reads, when it can say.
func (r *Reflector) path() string {
	p, err := r.Source.Info().Resource.Path()
	if err != nil {
		return ""
	}
	return p
}

// hint says what to do about a failure that will not fix itself.
func (r *Reflector) hint(e *SyncError) string {
	verb := "list"
	if e.Op != OpList && e.Op != OpWatchList {
		verb = "watch"
	}
	se, isStatus := asStatus(e.Err)
	switch {
	case errors.Is(e.Err, httpwatch.ErrUnknownResource):
		return "check the resource name, version and group: the server does not serve it"
	case errors.Is(e.Err, httpwatch.ErrNamespaceRequired):
		return "set a namespace: the resource is namespaced"
	case httpwatch.IsConnectionRefused(e.Err):
		return "check the server address: nothing listens there (or the server is restarting)"
	case !isStatus || !httpwatch.IsPermanent(e.Err):
		return ""
	case httpwatch.IsUnauthorized(e.Err):
		return "check the credentials: the server does not accept them (expired or wrong token, certificate?)"
	case httpwatch.IsForbidden(e.Err):
		return fmt.Sprintf("check RBAC: the identity may not %s %s", verb, r.Name)
	case httpwatch.IsNotFound(e.Err):
		return "check the resource name, version, group and namespace: the server does not serve " + r.Name + " there"
	case se.Code == http.StatusBadRequest || se.Code == http.StatusUnprocessableEntity:
		return r.selectorHint()
	}
	return "the server does not support this request"
}

func (r *Reflector) selectorHint() string {
	switch {
	case r.FieldSelector != "" && r.LabelSelector != "":
		return fmt.Sprintf("check the field selector %q and the label selector %q", r.FieldSelector, r.LabelSelector)
	case r.FieldSelector != "":
		return fmt.Sprintf("check the field selector %q: the server may not support that field for %s", r.FieldSelector, r.Name)
	case r.LabelSelector != "":
		return fmt.Sprintf("check the label selector %q", r.LabelSelector)
	}
	return "check the informer's options: the server refused the request"
}
