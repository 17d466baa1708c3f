package kubeconfig

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/require"
)

// fakePod lays out a pod's service-account mount under a temp root.
func fakePod(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		writeFile(t, filepath.Join(root, serviceAccountDir), name, []byte(content))
	}
	return root
}

func TestInClusterConfig(t *testing.T) {
	ca := newTestCA(t, "cluster-ca")
	sa := map[string]string{"token": "sa-token-1", "ca.crt": string(ca.pem), "namespace": "payments\n"}
	tests := []struct {
		name    string
		env     map[string]string
		files   map[string]string
		want    func(root string) *Config
		is      error
		wantErr string
	}{
		{
			name:  "pod",
			env:   map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			files: sa,
			want: func(root string) *Config {
				dir := filepath.Join(root, serviceAccountDir)
				return &Config{Host: "https://10.96.0.1:443", Namespace: "payments", BearerTokenFile: dir + "/token", CAFile: dir + "/ca.crt"}
			},
		},
		{
			name:  "IPv6 service address, POD_NAMESPACE wins",
			env:   map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443", "POD_NAMESPACE": "from-downward-api"},
			files: sa,
			want: func(root string) *Config {
				dir := filepath.Join(root, serviceAccountDir)
				return &Config{Host: "https://[fd00::1]:6443", Namespace: "from-downward-api", BearerTokenFile: dir + "/token", CAFile: dir + "/ca.crt"}
			},
		},
		{
			name:  "no namespace file",
			env:   map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			files: map[string]string{"token": "t", "ca.crt": "c"},
			want: func(root string) *Config {
				dir := filepath.Join(root, serviceAccountDir)
				return &Config{Host: "https://10.96.0.1:443", Namespace: "default", BearerTokenFile: dir + "/token", CAFile: dir + "/ca.crt"}
			},
		},
		{
			name:  "outside a cluster",
			env:   map[string]string{},
			files: sa,
			is:    ErrNotInCluster,
		},
		{
			name:  "port missing",
			env:   map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1"},
			files: sa,
			is:    ErrNotInCluster,
		},
		{
			name:    "token not mounted",
			env:     map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"},
			files:   map[string]string{"ca.crt": "c"},
			is:      os.ErrNotExist,
			wantErr: "the pod's service account is not mounted (automountServiceAccountToken: false?)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := fakePod(t, tt.files)
			cfg, err := inClusterConfig(root, func(k string) string { return tt.env[k] })
			if tt.want != nil {
				require.NoError(t, err)
				require.Equal(t, tt.want(root), cfg)
				return
			}
			require.ErrorIs(t, err, tt.is)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
			}
		})
	}
}

func TestInClusterTalksTLSWithRotatingToken(t *testing.T) {
	ca := newTestCA(t, "cluster-ca")
	srv := newTLSServer(t, ca, false, http.HandlerFunc(echo))
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	root := fakePod(t, map[string]string{"token": "sa-token-1", "ca.crt": string(ca.pem), "namespace": "payments"})
	env := map[string]string{"KUBERNETES_SERVICE_HOST": u.Hostname(), "KUBERNETES_SERVICE_PORT": u.Port()}
	cfg, err := inClusterConfig(root, func(k string) string { return env[k] })
	require.NoError(t, err)
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	s, code, err := getWith(t, rt, cfg.Host)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer sa-token-1", s.Authorization)

	writeFile(t, filepath.Join(root, serviceAccountDir), "token", []byte("sa-token-2"))
	clk.Step(TokenFileMaxAge)
	s, _, err = getWith(t, rt, cfg.Host)
	require.NoError(t, err)
	require.Equal(t, "Bearer sa-token-2", s.Authorization)
}
