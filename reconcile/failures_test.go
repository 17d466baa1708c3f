package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/testkit/testlog"
)

// Each failure of a reconcile is logged at the level it deserves, with
// what to do when retrying cannot cure it: a 403 names the verb and the
// resource to grant, where; lost races and cancellations stay at Debug.
// Decision 20.
func TestReconcileFailureLevels(t *testing.T) {
	status := func(code int, reason, verb, path string) error {
		return fmt.Errorf("apply: %w", &httpwatch.StatusError{Code: code, Reason: reason, Verb: verb, Path: path, Message: "the server says no"})
	}
	for _, tc := range []struct {
		name string
		err  error
		want string // the one line above Debug, "" for none
		has  []string
	}{
		{"403 on a patch", status(403, "Forbidden", "PATCH", "/api/v1/namespaces/ns/configmaps/a"), "ERROR reconcile failed, and retrying will not cure it",
			[]string{"verb=patch resource=configmaps code=403", "hint=check RBAC: grant patch on configmaps in namespace ns to this program's user or service account (a Role and a RoleBinding)"}},
		{"403 on a status update", status(403, "Forbidden", "PUT", "/apis/apps/v1/namespaces/ns/deployments/a/status"), "ERROR ",
			[]string{"verb=update resource=deployments.apps/status", "hint=check RBAC: grant update on deployments.apps/status in namespace ns"}},
		{"403 on a list at cluster scope", status(403, "Forbidden", "GET", "/api/v1/nodes"), "ERROR ",
			[]string{"verb=list resource=nodes", "grant list on nodes at cluster scope", "(a ClusterRole and a ClusterRoleBinding)"}},
		{"403 on a namespace", status(403, "Forbidden", "DELETE", "/api/v1/namespaces/ns"), "ERROR ",
			[]string{"verb=delete resource=namespaces", "grant delete on namespaces at cluster scope"}},
		{"401", status(401, "Unauthorized", "GET", "/api/v1/namespaces/ns/pods/a"), "ERROR ", []string{"hint=check the credentials"}},
		{"422", status(422, "Invalid", "POST", "/api/v1/namespaces/ns/pods"), "ERROR ", []string{"verb=create", "hint=the server refuses what was sent"}},
		{"404 on an object", &httpwatch.StatusError{Code: 404, Reason: "NotFound", Verb: "GET", Path: "/api/v1/namespaces/ns/pods/a",
			Details: httpwatch.StatusDetails{Name: "a", Kind: "pods"}}, "WARN reconcile failed; retrying after a backoff", []string{"verb=get resource=pods code=404"}},
		{"500", status(500, "InternalError", "PATCH", "/api/v1/namespaces/ns/configmaps/a"), "WARN reconcile failed; retrying after a backoff", nil},
		{"refused", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "WARN ", []string{"err=dial: connection refused"}},
		{"the reconcile's own error", errors.New("no room"), "WARN reconcile failed; retrying after a backoff", []string{"runner=r key=ns/a after=1s err=no room"}},
		{"panic", &panicError{key: "ns/a", value: "boom"}, "ERROR ", []string{`err=reconcile "ns/a": panic: boom`, "hint=fix the reconcile function"}},
		{"lost race", status(409, "Conflict", "PUT", "/api/v1/namespaces/ns/configmaps/a"), "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, log := loggedRunner()
			var seen []error
			r.OnError = func(_ string, err error) { seen = append(seen, err) }
			r.failed(context.Background(), "ns/a", time.Second, tc.err)
			assert.Equal(t, []error{tc.err}, seen, "OnError sees every failure")
			lines := log.Above()
			if tc.want == "" {
				assert.Empty(t, lines)
				return
			}
			if assert.Len(t, lines, 1) {
				assert.True(t, strings.HasPrefix(lines[0], tc.want), lines[0])
				for _, h := range tc.has {
					assert.Contains(t, lines[0], h)
				}
			}
		})
	}

	t.Run("cut off by its context", func(t *testing.T) {
		r, log := loggedRunner()
		r.OnError = func(string, error) { t.Error("a cancellation is no failure") }
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		r.failed(ctx, "ns/a", time.Second, fmt.Errorf("patch: %w", ctx.Err()))
		assert.Empty(t, log.Above())
	})
}

func loggedRunner() (*Runner, *testlog.Log) {
	logger, log := testlog.NewLogger()
	r := &Runner{Name: "r", Logger: logger, failing: map[string]bool{}}
	r.failures = faillog.Tracker{Logger: logger, Clock: clock.NewFake(time.Unix(0, 0))}
	return r, log
}

// The recovery is said once every key that failed has succeeded, not
// while one still fails. Decision 20.
func TestReconcileRecoveryWaitsForEveryKey(t *testing.T) {
	r, log := loggedRunner()
	r.failed(context.Background(), "ns/a", time.Second, errors.New("no room"))
	r.failed(context.Background(), "ns/b", time.Second, errors.New("no room"))
	r.succeeded("ns/a")
	assert.Len(t, log.Lines(slog.LevelInfo), 1, "ns/b still fails")
	r.succeeded("ns/b")
	lines := log.Lines(slog.LevelInfo)
	if assert.Len(t, lines, 2) {
		assert.Equal(t, "reconcile: reconciles succeed again after 2 failures runner=r failures=2 last_error=no room", lines[1].Text)
	}
}
