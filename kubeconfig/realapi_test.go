package kubeconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/stretchr/testify/require"
)

// TestRealAPIServer talks to a real kube-apiserver through kubeconfig files
// written here. It runs only when the variables scripts/realapi.sh exports
// are set (see package testkit/realapi); the 403 case needs a server started with
// REALAPI_AUTHZ=RBAC.
func TestRealAPIServer(t *testing.T) {
	server := realapi.Env(t, "REALAPI_URL")
	token, nobody, ca := realapi.Env(t, "REALAPI_TOKEN"), realapi.Env(t, "REALAPI_TOKEN_NOBODY"), realapi.Env(t, "REALAPI_CA")
	authz := realapi.Env(t, "REALAPI_AUTHZ")
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	// The CA sits beside the kubeconfig and is named by a relative path.
	caPEM, err := os.ReadFile(ca)
	require.NoError(t, err)
	writeFile(t, dir, "pki/apiserver.crt", caPEM)
	path := writeFile(t, dir, "config", fmt.Appendf(nil, `apiVersion: v1
kind: Config
current-context: admin
clusters:
- name: real
  cluster:
    server: %[1]q
    certificate-authority: pki/apiserver.crt
users:
- name: admin
  user: {token: %[2]q}
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: %[3]q
      interactiveMode: Never
      provideClusterInfo: true
      env:
      - {name: LISTWATCH_FAKE_PLUGIN, value: "1"}
      - {name: GORACE, value: atexit_sleep_ms=0}
      - {name: FAKE_TOKEN, value: %[2]q}
- name: wrong
  user: {token: not-a-valid-token}
- name: nobody
  user: {token: %[4]q}
contexts:
- {name: admin, context: {cluster: real, user: admin, namespace: kube-system}}
- {name: exec, context: {cluster: real, user: plugin}}
- {name: wrong, context: {cluster: real, user: wrong}}
- {name: nobody, context: {cluster: real, user: nobody}}
`, server, token, self, nobody))

	tests := []struct {
		context string
		code    int
		kind    string // of the body
		reason  string // of a Status body
	}{
		{"admin", http.StatusOK, "NamespaceList", ""},
		{"exec", http.StatusOK, "NamespaceList", ""},
		{"wrong", http.StatusUnauthorized, "Status", "Unauthorized"},
		{"nobody", http.StatusForbidden, "Status", "Forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.context, func(t *testing.T) {
			if tt.context == "nobody" && authz != "RBAC" {
				t.Skipf("the server allows everyone: REALAPI_AUTHZ is %s, not RBAC", authz)
			}
			cfg, err := Load(path, tt.context)
			require.NoError(t, err)
			rt, err := cfg.RoundTripper()
			require.NoError(t, err)
			closeIdle(t, rt)
			req, err := http.NewRequest(http.MethodGet, cfg.Host+"/api/v1/namespaces", nil)
			require.NoError(t, err)
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tt.code, resp.StatusCode, "%s", body)
			var got struct{ Kind, Reason string }
			require.NoError(t, json.Unmarshal(body, &got))
			require.Equal(t, tt.kind, got.Kind)
			require.Equal(t, tt.reason, got.Reason)
		})
	}

	t.Run("wrong CA", func(t *testing.T) {
		other := newTestCA(t, "not-the-cluster-ca")
		cfg, err := Load(path, "admin")
		require.NoError(t, err)
		cfg.CAFile, cfg.CAData = "", other.pem
		_, _, err = get(t, cfg)
		require.ErrorContains(t, err, "against CAData (the server's certificate is not signed by that CA")
	})
}
