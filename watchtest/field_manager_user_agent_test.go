package watchtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// A write that names no fieldManager is recorded under the product part of
// its User-Agent, as the real server records it; one without a product
// (no User-Agent, or one starting with "/") falls back to the same
// manager. The manager shows in the conflict a later apply meets.
func TestUpdateManagerIsUserAgentProduct(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name, ua, manager string
	}{
		{"product and version", "kubectl/v1.37.0 (linux/amd64)", "kubectl"},
		{"product alone", "controller", "controller"},
		{"none", "", "watchtest"},
		{"version without product", "/1.0", "watchtest"},
	}
	for i, tt := range tests {
		name := string(rune('a' + i))
		path := cmPath + name
		cfg := func(v string) string {
			return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"k":"` + v + `"}}`
		}
		code, body := send(t, s, http.MethodPatch, path+"?fieldManager=m1", applyType, cfg("v"))
		require.Equal(t, http.StatusCreated, code, "%s: %s", tt.name, body)

		req, err := http.NewRequest(http.MethodPatch, s.URL+path, strings.NewReader(`{"data":{"k":"w"}}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", mergeType)
		req.Header.Set("User-Agent", tt.ua) // empty: Go sends none
		resp, err := s.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, tt.name)

		code, body = send(t, s, http.MethodPatch, path+"?fieldManager=m1", applyType, cfg("v"))
		require.Equal(t, http.StatusConflict, code, "%s: %s", tt.name, body)
		assert.Equal(t, `Apply failed with 1 conflict: conflict with "`+tt.manager+`" using v1: .data.k`, gjson.GetBytes(body, "message").String(), tt.name)
	}
}
