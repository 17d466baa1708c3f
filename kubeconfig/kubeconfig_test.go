package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// writeTree writes files (slash paths relative to dir, "{dir}" in contents
// replaced by dir) and returns dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		writeFile(t, dir, filepath.FromSlash(name), []byte(strings.ReplaceAll(content, "{dir}", dir)))
	}
	return dir
}

// kindConfig is shaped like the file `kind create cluster` writes.
var kindConfig = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ` + b64("CA PEM") + `
    server: https://127.0.0.1:40123
  name: kind-kind
contexts:
- context:
    cluster: kind-kind
    user: kind-kind
  name: kind-kind
- context:
    cluster: kind-kind
    user: kind-kind
    namespace: kube-system
  name: kind-system
current-context: kind-kind
kind: Config
preferences: {}
users:
- name: kind-kind
  user:
    client-certificate-data: ` + b64("CERT PEM") + `
    client-key-data: ` + b64("KEY PEM") + `
`

func TestLoadKubeconfig(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		load    string // file to load, relative to the tree
		context string
		want    func(dir string) *Config
		wantErr []string // substrings, "{dir}" replaced
		is      error
		field   string // Error.Field, when the error is one
	}{
		{
			name:  "kind: data fields and current-context",
			files: map[string]string{"config": kindConfig},
			want: func(string) *Config {
				return &Config{Host: "https://127.0.0.1:40123", Namespace: "default", CAData: []byte("CA PEM"),
					CertData: []byte("CERT PEM"), KeyData: []byte("KEY PEM")}
			},
		},
		{
			name:    "named context with a namespace",
			files:   map[string]string{"config": kindConfig},
			context: "kind-system",
			want: func(string) *Config {
				return &Config{Host: "https://127.0.0.1:40123", Namespace: "kube-system", CAData: []byte("CA PEM"),
					CertData: []byte("CERT PEM"), KeyData: []byte("KEY PEM")}
			},
		},
		{
			name: "relative file paths resolve against the kubeconfig's folder",
			files: map[string]string{
				"kube/config": `
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: pki/ca.crt
    tls-server-name: api.internal
    proxy-url: http://proxy.corp:3128
users:
- name: u
  user:
    client-certificate: ../shared/alice.crt
    client-key: {dir}/abs/alice.key
    tokenFile: token
contexts:
- name: ctx
  context: {cluster: c, user: u, namespace: team-a}
current-context: ctx
`,
				"kube/pki/ca.crt":  "ca",
				"shared/alice.crt": "cert",
				"abs/alice.key":    "key",
				"kube/token":       "tok",
			},
			want: func(dir string) *Config {
				return &Config{Host: "https://10.0.0.1:6443", Namespace: "team-a", CAFile: dir + "/kube/pki/ca.crt",
					ServerName: "api.internal", ProxyURL: "http://proxy.corp:3128",
					CertFile: dir + "/shared/alice.crt", KeyFile: dir + "/abs/alice.key", BearerTokenFile: dir + "/kube/token"}
			},
		},
		{
			name: "token wins over tokenFile; basic auth; impersonation; insecure",
			files: map[string]string{"config": `
clusters:
- name: c
  cluster: {server: "https://h:443", insecure-skip-tls-verify: true}
users:
- name: u
  user:
    token: abc
    tokenFile: /does/not/matter
    as: jane
    as-uid: "42"
    as-groups: [dev, ops]
    as-user-extra:
      reason: [on call]
- name: basic
  user: {username: admin, password: pw}
contexts:
- {name: ctx, context: {cluster: c, user: u}}
- {name: basic, context: {cluster: c, user: basic}}
current-context: ctx
`},
			want: func(string) *Config {
				return &Config{Host: "https://h:443", Namespace: "default", Insecure: true, BearerToken: "abc",
					Impersonate: Impersonation{User: "jane", UID: "42", Groups: []string{"dev", "ops"}, Extra: map[string][]string{"reason": {"on call"}}}}
			},
		},
		{
			name: "exec user, cluster extension, relative command",
			files: map[string]string{"config": `
clusters:
- name: eks
  cluster:
    server: https://ABC.gr7.eu-west-1.eks.amazonaws.com
    certificate-authority-data: ` + b64("EKS CA") + `
    extensions:
    - name: client.authentication.k8s.io/exec
      extension:
        audience: sts
users:
- name: eks
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: ./bin/aws-token
      args: [eks, get-token, --cluster-name, prod]
      env:
      - name: AWS_PROFILE
        value: prod
      provideClusterInfo: true
      interactiveMode: IfAvailable
      installHint: install the aws cli
- name: gke
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: gke-gcloud-auth-plugin
      interactiveMode: Never
contexts:
- {name: eks, context: {cluster: eks, user: eks}}
- {name: gke, context: {cluster: eks, user: gke}}
current-context: eks
`},
			want: func(dir string) *Config {
				return &Config{Host: "https://ABC.gr7.eu-west-1.eks.amazonaws.com", Namespace: "default", CAData: []byte("EKS CA"),
					Exec: &ExecConfig{
						APIVersion: ExecAPIVersionV1beta1, Command: dir + "/bin/aws-token", Args: []string{"eks", "get-token", "--cluster-name", "prod"},
						Env: []ExecEnvVar{{"AWS_PROFILE", "prod"}}, ProvideClusterInfo: true, InteractiveMode: "IfAvailable",
						InstallHint: "install the aws cli", ClusterConfig: json.RawMessage(`{"audience":"sts"}`),
					}}
			},
		},
		{
			name: "bare exec command stays a PATH lookup; unknown keys are ignored",
			files: map[string]string{"config": `
clusters: [{name: c, cluster: {server: "https://h", disable-compression: true}}]
users: [{name: u, user: {exec: {command: kubelogin, apiVersion: client.authentication.k8s.io/v1, future-field: 1}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
preferences: {colors: true}
`},
			want: func(string) *Config {
				return &Config{Host: "https://h", Namespace: "default", Exec: &ExecConfig{APIVersion: ExecAPIVersionV1, Command: "kubelogin"}}
			},
		},
		{
			name: "YAML anchors and aliases",
			files: map[string]string{"config": `
clusters:
- name: a
  cluster: &prod {server: "https://prod:6443", tls-server-name: prod.internal}
- name: b
  cluster: *prod
contexts: [{name: x, context: {cluster: b, namespace: &ns team-b}}, {name: y, context: {cluster: a, namespace: *ns}}]
current-context: x
`},
			want: func(string) *Config {
				return &Config{Host: "https://prod:6443", ServerName: "prod.internal", Namespace: "team-b"}
			},
		},
		{
			name:    "missing context",
			files:   map[string]string{"config": kindConfig},
			context: "prod",
			is:      ErrNoContext,
			wantErr: []string{`kubeconfig {dir}/config defines no context "prod" (defined: "kind-kind", "kind-system")`},
		},
		{
			name:    "no current-context",
			files:   map[string]string{"config": strings.Replace(kindConfig, "current-context: kind-kind", "", 1)},
			is:      ErrNoContext,
			wantErr: []string{"kubeconfig {dir}/config sets no current-context; name a context"},
		},
		{
			name:    "empty file",
			files:   map[string]string{"config": ""},
			is:      ErrNoContext,
			wantErr: []string{"sets no current-context", "(defined: none)"},
		},
		{
			name:    "file missing",
			files:   map[string]string{},
			is:      os.ErrNotExist,
			wantErr: []string{"load kubeconfig: open {dir}/config"},
		},
		{
			name:    "context names an undefined cluster",
			files:   map[string]string{"config": strings.Replace(kindConfig, "cluster: kind-kind\n    user: kind-kind\n  name: kind-kind", "cluster: gone\n    user: kind-kind\n  name: kind-kind", 1)},
			field:   `contexts["kind-kind"].context.cluster`,
			wantErr: []string{`kubeconfig {dir}/config:8: contexts["kind-kind"].context.cluster: cluster "gone" is not defined in {dir}/config`},
		},
		{
			name:    "context names an undefined user",
			files:   map[string]string{"config": strings.Replace(kindConfig, "- name: kind-kind\n  user:", "- name: someone-else\n  user:", 1)},
			field:   `contexts["kind-kind"].context.user`,
			wantErr: []string{`user "kind-kind" is not defined`},
		},
		{
			name:    "bad YAML",
			files:   map[string]string{"config": "clusters:\n- name: a\n  cluster: {server: [\n"},
			wantErr: []string{"kubeconfig {dir}/config: not valid YAML: yaml: line"},
		},
		{
			name:    "a section of the wrong shape",
			files:   map[string]string{"config": "users:\n  alice:\n    token: hunter2\n"},
			field:   "users",
			wantErr: []string{"kubeconfig {dir}/config:2: users: want a list, got a mapping"},
		},
		{
			name:    "a secret of the wrong type",
			files:   map[string]string{"config": "users:\n- name: alice\n  user:\n    token: [hunter2]\n"},
			field:   `users["alice"].user.token`,
			wantErr: []string{`kubeconfig {dir}/config:4: users["alice"].user.token: want a string, got a list`},
		},
		{
			name:    "bad base64",
			files:   map[string]string{"config": strings.Replace(kindConfig, "client-key-data: "+b64("KEY PEM"), "client-key-data: not*base64", 1)},
			field:   `users["kind-kind"].user.client-key-data`,
			wantErr: []string{`users["kind-kind"].user.client-key-data: not valid base64: illegal base64 data at input byte 3`},
		},
		{
			name:    "bad boolean",
			files:   map[string]string{"config": "clusters:\n- name: c\n  cluster:\n    insecure-skip-tls-verify: maybe\n"},
			field:   `clusters["c"].cluster.insecure-skip-tls-verify`,
			wantErr: []string{`want true or false, got "maybe"`},
		},
		{
			name:    "entry without a name",
			files:   map[string]string{"config": "contexts:\n- context: {cluster: c}\n"},
			field:   "contexts[0]",
			wantErr: []string{"kubeconfig {dir}/config:2: contexts[0]: name is missing"},
		},
		{
			name:    "duplicate names in one file",
			files:   map[string]string{"config": "clusters:\n- name: c\n  cluster: {server: https://a}\n- name: c\n  cluster: {server: https://b}\n"},
			field:   "clusters[1]",
			wantErr: []string{`"c" is defined twice in this file (first on line 2)`},
		},
		{
			name:    "CA file and data",
			files:   map[string]string{"config": strings.Replace(kindConfig, "    server:", "    certificate-authority: ca.crt\n    server:", 1), "ca.crt": "x"},
			field:   `clusters["kind-kind"].cluster`,
			wantErr: []string{"set certificate-authority or certificate-authority-data, not both"},
		},
		{
			name:    "CA file missing",
			files:   map[string]string{"config": strings.Replace(kindConfig, "certificate-authority-data: "+b64("CA PEM"), "certificate-authority: pki/ca.crt", 1)},
			field:   `clusters["kind-kind"].cluster.certificate-authority`,
			is:      os.ErrNotExist,
			wantErr: []string{"kubeconfig {dir}/config:3: clusters[\"kind-kind\"].cluster.certificate-authority: stat {dir}/pki/ca.crt: no such file or directory"},
		},
		{
			name:    "client key file missing",
			files:   map[string]string{"config": strings.Replace(kindConfig, "client-key-data: "+b64("KEY PEM"), "client-key: alice.key", 1)},
			field:   `users["kind-kind"].user.client-key`,
			is:      os.ErrNotExist,
			wantErr: []string{"{dir}/alice.key"},
		},
		{
			name:    "certificate without key",
			files:   map[string]string{"config": strings.Replace(kindConfig, "    client-key-data: "+b64("KEY PEM")+"\n", "", 1)},
			wantErr: []string{`kubeconfig {dir}/config: context "kind-kind": config: a client certificate needs both`},
		},
		{
			name:    "server missing",
			files:   map[string]string{"config": strings.Replace(kindConfig, "    server: https://127.0.0.1:40123\n", "", 1)},
			field:   `clusters["kind-kind"].cluster.server`,
			wantErr: []string{"server: missing"},
		},
		{
			name:    "server without scheme",
			files:   map[string]string{"config": strings.Replace(kindConfig, "https://127.0.0.1:40123", "127.0.0.1:40123", 1)},
			field:   `clusters["kind-kind"].cluster.server`,
			wantErr: []string{`"127.0.0.1:40123" is not an https:// or http:// URL`},
		},
		{
			name:    "legacy gcp auth-provider",
			files:   map[string]string{"config": strings.Replace(kindConfig, "    client-certificate-data", "    auth-provider:\n      name: gcp\n      config: {access-token: hunter2}\n    client-certificate-data", 1)},
			field:   `users["kind-kind"].user.auth-provider`,
			wantErr: []string{`the legacy auth-provider "gcp" is not supported`, "gke-gcloud-auth-plugin"},
		},
		{
			name:    "legacy azure auth-provider",
			files:   map[string]string{"config": strings.Replace(kindConfig, "    client-certificate-data", "    auth-provider:\n      name: azure\n    client-certificate-data", 1)},
			wantErr: []string{`auth-provider "azure"`, "kubelogin", "Azure/kubelogin"},
		},
		{
			name: "a legacy entry of another user does not matter",
			files: map[string]string{"config": kindConfig + `- name: old-gke
  user:
    auth-provider: {name: gcp}
`},
			want: func(string) *Config {
				return &Config{Host: "https://127.0.0.1:40123", Namespace: "default", CAData: []byte("CA PEM"),
					CertData: []byte("CERT PEM"), KeyData: []byte("KEY PEM")}
			},
		},
		{
			name: "bad exec entry",
			files: map[string]string{"config": `
clusters: [{name: c, cluster: {server: "https://h"}}]
users: [{name: u, user: {exec: {command: aws, apiVersion: client.authentication.k8s.io/v1alpha1}}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`},
			field:   `users["u"].user.exec`,
			wantErr: []string{`exec plugin aws: apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files)
			load := tt.load
			if load == "" {
				load = "config"
				if _, ok := tt.files["kube/config"]; ok {
					load = "kube/config"
				}
			}
			cfg, err := Load(filepath.Join(dir, load), tt.context)
			if tt.want != nil {
				require.NoError(t, err)
				require.Equal(t, tt.want(dir), cfg)
				return
			}
			require.Error(t, err)
			for _, w := range tt.wantErr {
				require.Contains(t, err.Error(), strings.ReplaceAll(w, "{dir}", dir))
			}
			require.NotContains(t, err.Error(), "hunter2")
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			if tt.field != "" {
				var kerr *Error
				require.True(t, errors.As(err, &kerr), "want a *Error, got %T: %v", err, err)
				require.Equal(t, tt.field, kerr.Field)
				require.Equal(t, filepath.Join(dir, load), kerr.File)
				require.Positive(t, kerr.Line)
			}
		})
	}
}

func TestFromEnvironment(t *testing.T) {
	// Two kubeconfig files as a user with a work and a personal setup has
	// them. Both define cluster "shared"; the first file wins it whole.
	first := `
current-context: work
clusters:
- name: shared
  cluster:
    server: https://first.example:6443
    certificate-authority: ca.crt
contexts:
- name: work
  context: {cluster: shared, user: alice, namespace: work-ns}
users:
- name: alice
  user: {token: alice-token}
`
	second := `
current-context: home
clusters:
- name: shared
  cluster:
    server: https://second.example:6443
    insecure-skip-tls-verify: true
- name: home
  cluster:
    server: https://home.example:6443
    certificate-authority: certs/home-ca.crt
contexts:
- name: home
  context: {cluster: home, user: bob}
- name: work
  context: {cluster: home, user: bob, namespace: ignored}
- name: home-on-shared
  context: {cluster: shared, user: bob}
users:
- name: alice
  user: {token: ignored-token}
- name: bob
  user: {tokenFile: bob.token}
`
	dir := writeTree(t, map[string]string{
		"a/config": first, "a/ca.crt": "ca",
		"b/config": second, "b/certs/home-ca.crt": "ca", "b/bob.token": "tok",
		"home/.kube/config": strings.ReplaceAll(kindConfig, "kind-kind", "from-home"),
		"broken/config":     "clusters: [",
	})
	notInCluster := func() (*Config, error) { return nil, ErrNotInCluster }
	inCluster := func() (*Config, error) { return &Config{Host: "https://10.96.0.1:443", Namespace: "pod-ns"}, nil }
	a, b := filepath.Join(dir, "a/config"), filepath.Join(dir, "b/config")
	list := func(paths ...string) string { return strings.Join(paths, string(os.PathListSeparator)) }

	tests := []struct {
		name       string
		kubeconfig string
		home       string
		context    string
		inCluster  func() (*Config, error)
		want       *Config
		wantErr    []string
		is         error
	}{
		{
			name:       "first file wins current-context and names",
			kubeconfig: list(a, filepath.Join(dir, "missing"), b),
			want:       &Config{Host: "https://first.example:6443", Namespace: "work-ns", CAFile: dir + "/a/ca.crt", BearerToken: "alice-token"},
		},
		{
			name:       "a context from the second file, relative paths against its folder",
			kubeconfig: list(a, b),
			context:    "home",
			want:       &Config{Host: "https://home.example:6443", Namespace: "default", CAFile: dir + "/b/certs/home-ca.crt", BearerTokenFile: dir + "/b/bob.token"},
		},
		{
			name:       "a second-file context on a first-file cluster",
			kubeconfig: list(a, b),
			context:    "home-on-shared",
			want:       &Config{Host: "https://first.example:6443", Namespace: "default", CAFile: dir + "/a/ca.crt", BearerTokenFile: dir + "/b/bob.token"},
		},
		{
			name:       "order matters",
			kubeconfig: list(b, a),
			want:       &Config{Host: "https://home.example:6443", Namespace: "default", CAFile: dir + "/b/certs/home-ca.crt", BearerTokenFile: dir + "/b/bob.token"},
		},
		{
			name:       "duplicates and empty entries in KUBECONFIG",
			kubeconfig: list("", a, a, ""),
			want:       &Config{Host: "https://first.example:6443", Namespace: "work-ns", CAFile: dir + "/a/ca.crt", BearerToken: "alice-token"},
		},
		{
			name:       "a broken file is an error even if another would do",
			kubeconfig: list(a, filepath.Join(dir, "broken/config")),
			wantErr:    []string{"kubeconfig " + dir + "/broken/config: not valid YAML"},
		},
		{
			name: "no KUBECONFIG: ~/.kube/config",
			home: filepath.Join(dir, "home"),
			want: &Config{Host: "https://127.0.0.1:40123", Namespace: "default", CAData: []byte("CA PEM"), CertData: []byte("CERT PEM"), KeyData: []byte("KEY PEM")},
		},
		{
			name:      "nothing anywhere: in-cluster",
			home:      filepath.Join(dir, "nohome"),
			inCluster: inCluster,
			want:      &Config{Host: "https://10.96.0.1:443", Namespace: "pod-ns"},
		},
		{
			name:       "KUBECONFIG lists only missing files: in-cluster",
			kubeconfig: filepath.Join(dir, "missing"),
			inCluster:  inCluster,
			want:       &Config{Host: "https://10.96.0.1:443", Namespace: "pod-ns"},
		},
		{
			name:    "nothing anywhere, not in a cluster",
			home:    filepath.Join(dir, "nohome"),
			is:      ErrNotInCluster,
			wantErr: []string{"no kubeconfig defines anything (looked in " + dir + "/nohome/.kube/config), and not running in a Kubernetes pod"},
		},
		{
			name:      "a context asked for, but no kubeconfig",
			home:      filepath.Join(dir, "nohome"),
			context:   "prod",
			inCluster: inCluster,
			is:        ErrNoContext,
			wantErr:   []string{`"prod": no kubeconfig defines anything`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"KUBECONFIG": tt.kubeconfig}
			ic := tt.inCluster
			if ic == nil {
				ic = notInCluster
			}
			cfg, err := fromEnvironment(tt.context, func(k string) string { return env[k] }, tt.home, ic)
			if tt.want != nil {
				require.NoError(t, err)
				require.Equal(t, tt.want, cfg)
				return
			}
			for _, w := range tt.wantErr {
				require.ErrorContains(t, err, w)
			}
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
		})
	}
}
