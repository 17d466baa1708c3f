package cli_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

const kubeconfigFile = `
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: one
  cluster:
    server: https://one.example:6443
- name: two
  cluster:
    server: https://two.example:6443
users:
- name: u
  user:
    token: s3cr3t
contexts:
- name: one
  context: {cluster: one, user: u}
- name: two
  context: {cluster: two, user: u}
`

// The server is chosen by the first that applies: --server, --kubeconfig
// or --context, in-cluster when KUBERNETES_SERVICE_HOST is set, the demo.
func TestConnectionOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config")
	require.NoError(t, os.WriteFile(path, []byte(kubeconfigFile), 0o600))
	const demoURL = "http://127.0.0.1:1234"

	for name, tc := range map[string]struct {
		args          []string
		kubeconfigEnv bool // KUBECONFIG is set
		inCluster     bool // KUBERNETES_SERVICE_HOST is set
		wantHost      string
		wantWhere     string
		wantDemo      bool
	}{
		"server flag": {
			args:     []string{"--server", "https://flag.example", "--token-file", "tf", "--ca", "ca.crt", "--insecure-skip-tls-verify"},
			wantHost: "https://flag.example", wantWhere: "https://flag.example",
		},
		"server flag wins over the pod": {
			args: []string{"--server", "https://flag.example"}, inCluster: true,
			wantHost: "https://flag.example", wantWhere: "https://flag.example",
		},
		"kubeconfig, current context": {
			args:     []string{"--kubeconfig", path},
			wantHost: "https://one.example:6443", wantWhere: "https://one.example:6443",
		},
		"kubeconfig wins over the pod": {
			args: []string{"--kubeconfig", path, "--context", "two"}, inCluster: true,
			wantHost: "https://two.example:6443", wantWhere: "https://two.example:6443",
		},
		"context alone reads $KUBECONFIG": {
			args: []string{"--context", "two"}, inCluster: true,
			wantHost: "https://two.example:6443", wantWhere: "https://two.example:6443",
		},
		"server without a scheme is https": {
			args:     []string{"--server", "127.0.0.1:6443"},
			wantHost: "https://127.0.0.1:6443", wantWhere: "https://127.0.0.1:6443",
		},
		"$KUBECONFIG wins over the pod": {
			kubeconfigEnv: true, inCluster: true,
			wantHost: "https://one.example:6443", wantWhere: "https://one.example:6443 (from $KUBECONFIG)",
		},
		"$KUBECONFIG wins over the demo": {
			kubeconfigEnv: true,
			wantHost:      "https://one.example:6443", wantWhere: "https://one.example:6443 (from $KUBECONFIG)",
		},
		"no flags, not in a pod": {
			wantHost: demoURL, wantWhere: demoURL + " (embedded demo server; --server or --kubeconfig for a real one)", wantDemo: true,
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("KUBECONFIG", "")
			if tc.kubeconfigEnv || tc.args != nil {
				t.Setenv("KUBECONFIG", path)
			}
			t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
			if tc.inCluster {
				t.Setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
			} else {
				t.Setenv("KUBERNETES_SERVICE_HOST", "")
			}
			var kf kubeconfig.Flags
			fs := flag.NewFlagSet("test", flag.ContinueOnError)
			kf.Register(fs)
			require.NoError(t, cli.Parse(fs, tc.args))

			demoStarted, demoClosed := false, false
			cfg, where, closeFn, err := cli.Connect(t.Context(), &kf, func(context.Context) (string, func(), error) {
				demoStarted = true
				return demoURL, func() { demoClosed = true }, nil
			})
			require.NoError(t, err)
			assert.Equal(t, tc.wantHost, cfg.Host)
			assert.Equal(t, tc.wantWhere, where)
			assert.Equal(t, tc.wantDemo, demoStarted, "demo started")
			require.NotNil(t, closeFn, "closeFn can always be deferred")
			closeFn()
			assert.Equal(t, tc.wantDemo, demoClosed, "closeFn closes the demo")
		})
	}
}

func TestConnectionErrors(t *testing.T) {
	errDemo := errors.New("no demo today")
	demo := func(context.Context) (string, func(), error) { return "", nil, errDemo }

	t.Run("demo fails", func(t *testing.T) {
		t.Setenv("KUBERNETES_SERVICE_HOST", "")
		t.Setenv("KUBECONFIG", "")
		_, _, _, err := cli.Connect(t.Context(), &kubeconfig.Flags{}, demo)
		assert.ErrorIs(t, err, errDemo)
	})
	t.Run("kubeconfig missing", func(t *testing.T) {
		_, _, _, err := cli.Connect(t.Context(), &kubeconfig.Flags{Kubeconfig: filepath.Join(t.TempDir(), "none")}, demo)
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("context in no kubeconfig", func(t *testing.T) {
		t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
		_, _, _, err := cli.Connect(t.Context(), &kubeconfig.Flags{Context: "two"}, demo)
		assert.ErrorIs(t, err, kubeconfig.ErrNoContext)
	})
	t.Run("in-cluster without a service account", func(t *testing.T) {
		if _, err := os.Stat("/var/run/secrets/kubernetes.io/serviceaccount/token"); err == nil {
			t.Skip("running in a pod: the in-cluster config would work")
		}
		t.Setenv("KUBECONFIG", "")
		t.Setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
		t.Setenv("KUBERNETES_SERVICE_PORT", "6443")
		_, _, _, err := cli.Connect(t.Context(), &kubeconfig.Flags{}, demo)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "in-cluster config (KUBERNETES_SERVICE_HOST is set)")
		assert.NotErrorIs(t, err, errDemo, "the demo is not the fallback inside a pod")
	})
}
