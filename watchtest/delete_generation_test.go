package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

// A delete that leaves the object in place (a finalizer holds it) bumps
// metadata.generation of a resource that keeps one, as the real server
// does, and adds none to one that does not (decision 7; e2e.TestWatchtestWritesMatchRealServer compares it).
func TestGracefulDeleteBumpsGeneration(t *testing.T) {
	s := newServer(t)
	s.AddResource(widgets, widget)
	for _, tc := range []struct {
		r    httpwatch.Resource
		path string
		want string
	}{
		{widgets, "/apis/example.com/v1/namespaces/prod/widgets/w", "2"},
		{watchtest.Deployments, "/apis/apps/v1/namespaces/prod/deployments/w", "2"},
		{watchtest.ConfigMaps, "/api/v1/namespaces/prod/configmaps/w", ""},
	} {
		t.Run(tc.r.String(), func(t *testing.T) {
			mustCreate(t, s, tc.r, map[string]any{
				"metadata": map[string]any{"name": "w", "namespace": "prod", "finalizers": []string{"example.com/hold"}},
				"spec":     map[string]any{"a": "b"},
			})
			code, body, _ := do(t, s, http.MethodDelete, tc.path, "")
			require.Equal(t, http.StatusOK, code, "%s", body)
			assert.True(t, gjson.GetBytes(body, "metadata.deletionTimestamp").Exists(), "%s", body)
			assert.Equal(t, tc.want, gjson.GetBytes(body, "metadata.generation").Raw)
		})
	}
}
