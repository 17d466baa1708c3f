package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under a group no resource belongs to, the real server has no handler at
// all and answers a plain-text 404, the group's own path included; under
// a group it serves, an unknown resource is a NotFound Status (golden
// fixture). Clients tell "no such API" from "no such resource" by it
// (decision 7).
func TestUnknownGroupIsAPlainNotFound(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		path   string
		status bool // a Status body, else the plain-text 404
	}{
		{"/apis/nosuch.io/v1/namespaces/prod/things", false},
		{"/apis/nosuch.io/v1/things/x", false},
		{"/apis/nosuch.io", false},
		{"/apis/apps/v1/namespaces/prod/nosuch", true},
	}
	for _, tt := range tests {
		code, body, h := do(t, s, http.MethodGet, tt.path, "")
		require.Equal(t, http.StatusNotFound, code, "%s: %s", tt.path, body)
		if tt.status {
			assert.Equal(t, string(fixture(t, "list-unknown-resource.json")), string(body), tt.path)
			continue
		}
		assert.Equal(t, "404 page not found\n", string(body), tt.path)
		assert.Equal(t, "text/plain; charset=utf-8", h.Get("Content-Type"), tt.path)
	}
}
