package lease

import (
	"context"
	"errors"
	"fmt"
	"github.com/listwatch/listwatch/testkit/testlog"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
)

func statusError(verb string, code int, reason string) error {
	name := "l"
	if verb == "list" {
		name = ""
	}
	return &RequestError{Verb: verb, Lease: name, Namespace: "ns", Err: &httpwatch.StatusError{Code: code, Reason: reason, Verb: "GET", Path: "/p"}}
}

// The Reporter's rules, one failure at a time: lost races at Debug only,
// cancellation not at all, the first of each distinct failure at Warn or
// (permanent) Error, repeats at Debug and counted into the failure's next
// line, the recovery once at Info (package faillog). Decision 25.
func TestReporterLogsEachFailureOnce(t *testing.T) {
	logger, log := testlog.NewLogger()
	clk := clock.NewFake(time.Unix(0, 0).UTC())
	var seen int
	r := &Reporter{Logger: logger, OnError: func(error) { seen++ }, Clock: clk, Who: "w", Verbs: "get"}
	lines := func() []string {
		var out []string
		for _, l := range log.Lines(slog.LevelDebug) {
			out = append(out, l.String())
		}
		return out
	}

	r.Failed(statusError("update", 409, "Conflict"))
	r.Failed(statusError("create", 409, "AlreadyExists"))
	r.Failed(fmt.Errorf("get: %w", context.Canceled))
	r.Succeeded()
	assert.Equal(t, 2, seen, "races reach OnError, cancellation does not")
	require.Len(t, lines(), 2)
	assert.Empty(t, log.Lines(slog.LevelInfo), "races only at Debug, and no recovery after them")

	timeout := &RequestError{Verb: "get", Lease: "l", Namespace: "ns", Err: errors.New("dial tcp: i/o timeout")}
	r.Failed(timeout)
	r.Failed(timeout)
	r.Failed(statusError("get", 503, "ServiceUnavailable"))
	r.Failed(statusError("list", 403, "Forbidden"))
	r.Failed(statusError("get", 403, "Forbidden"))
	clk.Step(SummaryEvery)
	r.Failed(statusError("get", 403, "Forbidden"))
	r.Succeeded()
	r.Succeeded()
	assert.Equal(t, []string{
		"WARN w: cannot get lease ns/l; retrying verb=get lease=l namespace=ns error=get lease ns/l: dial tcp: i/o timeout",
		"DEBUG w: lease requests failed again verb=get lease=l namespace=ns error=get lease ns/l: dial tcp: i/o timeout",
		"WARN w: cannot get lease ns/l: 503 Service Unavailable; retrying verb=get lease=l namespace=ns error=get lease ns/l: GET /p: 503 ServiceUnavailable",
		"ERROR w: cannot list leases in namespace ns: 403 Forbidden; check RBAC: grant get on leases.coordination.k8s.io in namespace ns to this program's user or service account (a Role and a RoleBinding) verb=list namespace=ns error=list leases in namespace ns: GET /p: 403 Forbidden",
		"DEBUG w: lease requests failed again verb=get lease=l namespace=ns error=get lease ns/l: GET /p: 403 Forbidden",
		"ERROR w: lease requests failed 2 more times since 1970-01-01T00:00:00Z verb=get lease=l namespace=ns error=get lease ns/l: GET /p: 403 Forbidden repeats=2 since=1970-01-01 00:00:00 +0000 UTC",
		"INFO w: lease requests succeed again after 6 failures failures=6 last_error=get lease ns/l: GET /p: 403 Forbidden",
	}, lines()[2:])
	assert.Equal(t, 2+6, seen)
}
