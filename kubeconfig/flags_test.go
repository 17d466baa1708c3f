package kubeconfig

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const flagsKubeconfig = `
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: one
  cluster: {server: "https://one.example:6443"}
- name: two
  cluster: {server: "https://two.example:6443"}
users:
- name: u
  user: {token: s3cr3t-token}
contexts:
- name: one
  context: {cluster: one, user: u}
- name: two
  context: {cluster: two, user: u}
`

// The flags choose the server as kubectl does, and reject combinations
// that would silently ignore one of them.
func TestFlagsLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(path, []byte(flagsKubeconfig), 0o600))
	home := filepath.Join(dir, "home")
	require.NoError(t, os.MkdirAll(filepath.Join(home, ".kube"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(home, ".kube", "config"), []byte(strings.ReplaceAll(flagsKubeconfig, "current-context: one", "current-context: two")), 0o600))
	pod := func() (*Config, error) { return &Config{Host: "https://10.96.0.1:443"}, nil }
	outside := func() (*Config, error) { return nil, ErrNotInCluster }

	for name, tc := range map[string]struct {
		args      []string
		env       string // $KUBECONFIG
		home      string
		inCluster func() (*Config, error)
		want      string // the host, or the error's text
		wantErr   error
	}{
		"server":                      {args: []string{"--server", "https://flag.example", "--token-file", "tf", "--ca", "ca.crt", "--insecure-skip-tls-verify"}, want: "https://flag.example"},
		"server without a scheme":     {args: []string{"--server", "127.0.0.1:6443"}, want: "https://127.0.0.1:6443"},
		"kubeconfig":                  {args: []string{"--kubeconfig", path}, home: home, want: "https://one.example:6443"},
		"kubeconfig and context":      {args: []string{"--kubeconfig", path, "--context", "two"}, want: "https://two.example:6443"},
		"$KUBECONFIG":                 {env: path, home: home, inCluster: pod, want: "https://one.example:6443"},
		"context reads $KUBECONFIG":   {args: []string{"--context", "two"}, env: path, want: "https://two.example:6443"},
		"~/.kube/config":              {home: home, inCluster: pod, want: "https://two.example:6443"},
		"in-cluster fallback":         {inCluster: pod, want: "https://10.96.0.1:443"},
		"nothing at all":              {inCluster: outside, want: "no API server given: use --kubeconfig or --server", wantErr: ErrNotInCluster},
		"missing kubeconfig":          {args: []string{"--kubeconfig", filepath.Join(dir, "nope")}, want: "--kubeconfig " + filepath.Join(dir, "nope") + ": load kubeconfig:", wantErr: os.ErrNotExist},
		"unknown context":             {args: []string{"--kubeconfig", path, "--context", "three"}, want: "--kubeconfig", wantErr: ErrNoContext},
		"server and kubeconfig":       {args: []string{"--server", "https://admin:hunter2@k:6443", "--kubeconfig", path}, want: "--server https://admin:xxxxx@k:6443 with --kubeconfig or --context: give one or the other"},
		"server and context":          {args: []string{"--server", "k:6443", "--context", "two"}, want: "with --kubeconfig or --context"},
		"token file without a server": {args: []string{"--kubeconfig", path, "--token-file", "tf"}, want: "--token-file goes with --server"},
		"ca without a server":         {args: []string{"--ca", "ca.crt"}, want: "--ca goes with --server"},
		"insecure without a server":   {args: []string{"--insecure-skip-tls-verify"}, want: "--insecure-skip-tls-verify goes with --server"},
	} {
		t.Run(name, func(t *testing.T) {
			var f Flags
			fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
			f.Register(fs)
			require.NoError(t, fs.Parse(tc.args))
			getenv := func(k string) string {
				if k == "KUBECONFIG" {
					return tc.env
				}
				return ""
			}
			if tc.inCluster == nil {
				tc.inCluster = func() (*Config, error) { return nil, errors.New("in-cluster must not be asked") }
			}
			cfg, err := f.load(getenv, tc.home, tc.inCluster)
			if tc.wantErr != nil || strings.HasPrefix(tc.want, "-") || strings.Contains(tc.want, " ") {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.want)
				if tc.wantErr != nil {
					assert.ErrorIs(t, err, tc.wantErr)
				}
				assert.NotContains(t, err.Error(), "hunter2")
				assert.NotContains(t, err.Error(), "s3cr3t")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.Host)
		})
	}
}

func TestFlagsServerConfig(t *testing.T) {
	f := Flags{Server: "https://k:6443", TokenFile: "tf", CA: "ca.crt", Insecure: true}
	cfg, err := f.Load()
	require.NoError(t, err)
	assert.Equal(t, Config{Host: "https://k:6443", BearerTokenFile: "tf", CAFile: "ca.crt", Insecure: true}, *cfg)
}

// decision 36: --request-timeout sets Config.Timeout whichever way the
// server is chosen; without it the Config keeps its default.
func TestFlagsRequestTimeout(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--server", "https://k:6443", "--request-timeout", "20s"}, 20 * time.Second},
		{[]string{"--server", "https://k:6443"}, 0},
	} {
		var f Flags
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		f.Register(fs)
		require.NoError(t, fs.Parse(tc.args))
		cfg, err := f.Load()
		require.NoError(t, err)
		assert.Equal(t, tc.want, cfg.Timeout, "%v", tc.args)
	}
}

// -h lists every flag and returns flag.ErrHelp (a program exits 0 on it),
// and a password in a default server is not printed.
func TestFlagsHelp(t *testing.T) {
	f := Flags{Server: "https://admin:hunter2@k:6443"}
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	var out strings.Builder
	fs.SetOutput(&out)
	f.Register(fs)
	assert.ErrorIs(t, fs.Parse([]string{"--help"}), flag.ErrHelp)
	for _, name := range []string{"-kubeconfig", "-context", "-server", "-token-file", "-ca", "-insecure-skip-tls-verify", "-request-timeout"} {
		assert.Contains(t, out.String(), name)
	}
	assert.NotContains(t, out.String(), "hunter2")
	assert.Contains(t, out.String(), "https://admin:xxxxx@k:6443")
	assert.Equal(t, "https://admin:hunter2@k:6443", f.Server, "the value itself is kept")
}
