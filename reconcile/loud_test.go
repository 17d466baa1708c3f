package reconcile_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

// A reconcile whose writes the server forbids says so at once, in one
// Error line naming the runner, the verb and the resource to grant; every
// failure reaches OnError and Observe; the retries add no line; once the
// writes go through, one Info line says so. Decision 20.
func TestForbiddenReconcileIsOneErrorLine(t *testing.T) {
	f := newFixture(t)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	f.create(watchtest.ConfigMaps, "ns", "b", "")
	const failures = 8
	f.s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"patch"}, Times: failures,
		Message: `configmaps "a" is forbidden: User "ctl" cannot patch resource "configmaps" in API group "" in the namespace "ns"`})
	cms := f.client.Resource(watchtest.ConfigMaps)
	rec := newRecorder()
	rec.answer = func(ctx context.Context, key string) (reconcile.Result, error) {
		ns, name, _ := strings.Cut(key, "/")
		_, err := cms.Namespace(ns).Patch(ctx, name, httpwatch.MergePatch, []byte(`{"data":{"seen":"yes"}}`))
		return reconcile.Result{}, err
	}
	inf := f.informer(watchtest.ConfigMaps)
	r := f.runner(inf, rec)
	logger, log := testlog.NewLogger()
	r.Logger = logger
	var mu sync.Mutex
	var errs []error
	r.OnError = func(key string, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
	}
	obs := observe(r)
	start(t, r)

	obs.waitFor(t, 2)
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "one line for both keys: %v", lines)
	assert.Equal(t, slog.LevelError, lines[0].Level)
	for _, want := range []string{
		"reconcile failed, and retrying will not cure it", "runner=" + inf.Reflector.Name + " ",
		"verb=patch", "resource=configmaps", "code=403", `cannot patch resource "configmaps"`,
		"hint=check RBAC: grant patch on configmaps in namespace ns to this program's user or service account (a Role and a RoleBinding)",
	} {
		assert.Contains(t, lines[0].Text, want)
	}
	assert.NotContains(t, lines[0].Text, "runner= ", "a runner is never nameless")

	// The retries (1 s, 2 s, 4 s... per key) fail until the grant, quietly;
	// then both keys succeed, and that is one line.
	stepUntil(t, f.clk, time.Second, func() bool { return len(log.Lines(slog.LevelInfo)) == 2 }, "the recovery line")
	obs.waitFor(t, failures+2)
	lines = log.Lines(slog.LevelInfo)
	assert.Equal(t, slog.LevelInfo, lines[1].Level)
	assert.Contains(t, lines[1].Text, "reconcile: reconciles succeed again after 8 failures runner="+inf.Reflector.Name)
	mu.Lock()
	assert.Len(t, errs, failures, "every failure reaches OnError")
	for _, err := range errs {
		assert.True(t, httpwatch.IsForbidden(err), err)
	}
	mu.Unlock()
	assert.Equal(t, failures, count(obs.get(), reconcile.Error), "every failure reaches Observe")
	f.step(time.Hour)
	assert.Len(t, log.Lines(slog.LevelInfo), 2, "a healthy runner logs nothing above Debug")
}

func count(outcomes []reconcile.Outcome, o reconcile.Outcome) int {
	n := 0
	for _, x := range outcomes {
		if x == o {
			n++
		}
	}
	return n
}
