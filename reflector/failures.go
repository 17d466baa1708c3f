package reflector

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
)

// A reflector retries every failure for ever, so the log says what is
// wrong once, loudly, and then stays readable: package faillog's policy
// (decision 20), with the reflector's classification. A failure is keyed
// by its operation and class (failureKey), logged at Warn, or at Error
// with what to do when retrying cannot cure it (httpwatch.IsPermanent);
// the first sync or watch event after it is the recovery. Routine errors
// (see SyncError.Routine) stay at Debug.

// routine reports whether err is part of normal operation for op: the
// reflector relists or resumes and nothing is wrong.
func routine(op Op, err error) bool {
	switch {
	case versionUnavailable(err): // a relist after 410 or a compacted version
		return true
	case errors.Is(err, ErrNoInitialEventsEnd): // a paged list follows
		return true
	case errors.Is(err, httpwatch.ErrWatchIdle): // resumed, but the connection was silent
		return false
	case op == OpWatch && httpwatch.IsProbableEOF(err): // a cut watch resumes
		return true
	}
	return false
}

// failureKey is what makes two failures "the same": list or watch (a
// watch-list is a way of listing, and a watch start a way of watching), and
// the class of the error.
func failureKey(op Op, err error) string {
	what := "watch"
	if op == OpList || op == OpWatchList {
		what = "list"
	}
	se, isStatus := asStatus(err)
	switch {
	case errors.Is(err, discovery.ErrUnknownResource):
		return what + " unknown resource"
	case errors.Is(err, httpwatch.ErrNamespaceRequired):
		return what + " namespace required"
	case isStatus:
		return fmt.Sprint(what, " ", se.Code)
	case httpwatch.IsConnectionRefused(err):
		return what + " connection refused"
	case errors.Is(err, httpwatch.ErrWatchIdle):
		return what + " silent watch"
	case httpwatch.IsProbableEOF(err):
		return what + " connection lost"
	case errors.Is(err, ErrVeryShortWatch):
		return what + " very short watch"
	case errors.Is(err, ErrUnexpectedKind):
		return what + " unexpected kind"
	}
	return fmt.Sprintf("%s %s %T", what, op, errors.Unwrap(err))
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
	if httpwatch.IsPermanent(e.Err) {
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

// hint says what to do about a failure that will not fix itself.
func (r *Reflector) hint(e *SyncError) string {
	verb := "list"
	if e.Op != OpList && e.Op != OpWatchList {
		verb = "watch"
	}
	se, isStatus := asStatus(e.Err)
	switch {
	case errors.Is(e.Err, discovery.ErrUnknownResource):
		return "check the resource name, version and group: the server does not serve it"
	case errors.Is(e.Err, httpwatch.ErrNamespaceRequired):
		return "set a namespace: the resource is namespaced"
	case httpwatch.IsConnectionRefused(e.Err):
		return "check the server address: nothing listens there (or the server is restarting)"
	case errors.Is(e.Err, httpwatch.ErrWatchIdle):
		return "the watch resumed on a new connection; if this repeats, look for a proxy, NAT or load balancer between here and the server that drops quiet connections"
	case !isStatus && httpwatch.IsPermanent(e.Err): // the server's certificate
		return "check the CA (certificate-authority) and the server name: the server's certificate does not verify against them"
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
