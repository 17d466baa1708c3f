package e2e

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/discovery"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/realapi"
)

func logLines(b *syncBuffer) []string {
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// decision 20, decision 21, decision 24: against a real kube-apiserver, an
// informer (named after its resource, configmaps.v1) refused by RBAC, one asking for a field selector the resource
// does not support, and one over a misspelt resource, each print one clear
// line at Error within 2 s, and the
// fail-fast wait returns the reason within 2 s, however often the informer
// retries.
func TestInformerFailuresAreLoudOnRealServer(t *testing.T) {
	nobody := realapi.Env(t, "REALAPI_TOKEN_NOBODY")
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	for _, tc := range []struct {
		name, token, field string
		resource           string // configmaps unless set
		is                 func(error) bool
		contains           []string
	}{
		{"no RBAC on the resource", nobody, "", "", httpwatch.IsForbidden,
			[]string{"level=ERROR", `msg="reflector: list failed"`, "resource=configmaps.v1", "verb=GET", "path=/api/v1/configmaps",
				`cannot list resource \"configmaps\"`, `hint="check RBAC: grant list on configmaps at cluster scope`}},
		{"unsupported field selector", "", "data.v=1", "", func(err error) bool { return httpwatch.IsPermanent(err) },
			[]string{"level=ERROR", `msg="reflector: list failed"`, "code=400", `is not a known field selector`,
				`hint="check the field selector \"data.v=1\"`}},
		{"misspelt resource", "", "", "configmap", func(err error) bool { return errors.Is(err, discovery.ErrUnknownResource) },
			[]string{"level=ERROR", `msg="reflector: list failed"`, "did you mean configmaps?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config(t)
			if tc.token != "" {
				cfg.BearerToken = tc.token
			}
			c, err := httpwatch.NewClient(cfg)
			require.NoError(t, err)
			t.Cleanup(c.CloseIdleConnections)
			res := configMaps
			if tc.resource != "" {
				res.Resource = tc.resource
			}
			// No Name: a NewInformer is named after its resource.
			inf := listwatch.NewInformer(c.Resource(res), 0, listwatch.Selector{Field: tc.field})
			inf.Reflector.Backoff = reflector.Backoff{Initial: 10 * time.Millisecond, Cap: 20 * time.Millisecond}
			out := &syncBuffer{}
			inf.Logger = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo}))

			startInformer(t, inf)
			err = failsFast(t, inf)
			assert.True(t, tc.is(err), "%v", err)
			assert.True(t, httpwatch.IsPermanent(err), "%v", err)
			var se *httpwatch.StatusError
			require.ErrorAs(t, err, &se)
			assert.NotContains(t, err.Error(), "\n")
			assert.NotContains(t, err.Error(), cfg.BearerToken)

			// Let it retry a while: still one line.
			require.Eventually(t, func() bool { return inf.Stats().Errors >= 10 }, wait, 10*time.Millisecond)
			lines := logLines(out)
			require.Len(t, lines, 1, "%q", lines)
			for _, c := range tc.contains {
				assert.Contains(t, lines[0], c)
			}
			assert.NotContains(t, lines[0], cfg.BearerToken)
			// The error names the informer by its identity (decision 41).
			assert.True(t, strings.HasPrefix(inf.Name(), res.Resource+".v1"), inf.Name())
			assert.True(t, strings.HasPrefix(err.Error(), inf.Name()+" not synced: "), "the error names the informer: %v", err)
			t.Logf("the line: %s", lines[0])
			t.Logf("the error: %v", err)
		})
	}
}
