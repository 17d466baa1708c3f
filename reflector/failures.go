package reflector

import (
	"errors"
	"log/slog"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/cause"
	"github.com/listwatch/listwatch/internal/faillog"
)

// A reflector retries every failure for ever, so the log says what is
// wrong once, loudly, and then stays readable: package faillog's policy
// (decision 20), with the causes of package cause. A failure is keyed by
// its operation and cause, logged at Warn, or at Error with what to do
// when retrying cannot cure it; the first sync or watch event after it is
// the recovery. Routine errors (see SyncError.Routine) stay at Debug.

// routine reports whether err is part of normal operation for op: the
// reflector relists or resumes and nothing is wrong. An open watch that
// its connection ends is resumed at once: that is routine too.
func routine(op Op, err error) bool {
	c := cause.Of(err)
	return c.Class == cause.Routine || op == OpWatch && c.Quiet
}

// failureKey is what makes two failures "the same": list or watch (a
// watch-list is a way of listing, and a watch start a way of watching), and
// the cause.
func failureKey(op Op, err error) string {
	what := "watch"
	if op == OpList || op == OpWatchList {
		what = "list"
	}
	return what + " " + cause.Of(err).LogKey()
}

// logFailure writes what e deserves in the log, and nothing more.
func (r *Reflector) logFailure(e *SyncError) {
	if e.Routine {
		r.logger().Debug("reflector: routine error", r.attrs(e)...)
		return
	}
	f := faillog.Failure{
		Key:   failureKey(e.Op, e.Err),
		Level: slog.LevelWarn,
		Msg:   "reflector: " + e.Op.String() + " failed",
		Again: "reflector: " + e.Op.String() + " failed",
		Attrs: r.attrs(e),
		Err:   e.Err,
	}
	if cause.Of(e.Err).Class == cause.Permanent {
		f.Level = slog.LevelError
	}
	if hint := r.hint(e); hint != "" {
		f.Attrs = append(f.Attrs, "hint", hint)
	}
	r.tracker().Failed(f)
}

// recovered records that the server answered a list or watch as it should,
// and when (Stats.LastSync).
func (r *Reflector) recovered() {
	r.stats.synced(r.clock().Now())
	r.tracker().Recovered("reflector: recovered", "resource", r.Name)
}

// tracker is the failures' log, on the reflector's logger and clock.
func (r *Reflector) tracker() *faillog.Tracker {
	if r.failures.Logger == nil {
		r.failures.Logger, r.failures.Clock = r.logger(), r.clock()
	}
	return &r.failures
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
	if errors.Is(e.Err, discovery.ErrUnknownResource) || errors.Is(e.Err, httpwatch.ErrNamespaceRequired) {
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

// hint says what to do about e, or "".
func (r *Reflector) hint(e *SyncError) string {
	rq := cause.Request{Verb: "list", Resource: r.Name, LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
	if e.Op != OpList && e.Op != OpWatchList {
		rq.Verb = "watch"
	}
	if res := r.Source.Info().Resource; res.Resource != "" {
		rq.Namespace = res.Namespace
	}
	if se, ok := asStatus(e.Err); ok && se.Path != "" {
		if _, resource, ns := se.Request(); resource != "" {
			rq.Resource, rq.Namespace = resource, ns
		}
	}
	return cause.Of(e.Err).HintFor(rq)
}
