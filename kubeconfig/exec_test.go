package kubeconfig

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// The exec plugin in these tests is this test binary, run again with
// LISTWATCH_FAKE_PLUGIN=1: it answers before any test starts. FAKE_*
// variables steer it; "{run}" in FAKE_TOKEN, FAKE_CERT and FAKE_KEY becomes
// the run's number (1, 2, ...), counted in FAKE_RUNS_FILE, and run n's
// credential expires at FAKE_EXPIRY + (n-1)*FAKE_EXPIRY_EVERY.
func init() {
	if os.Getenv("LISTWATCH_FAKE_PLUGIN") == "1" {
		os.Exit(fakePlugin())
	}
}

func fakePlugin() int {
	env := os.Getenv
	info := env("KUBERNETES_EXEC_INFO")
	if f := env("FAKE_INFO_FILE"); f != "" {
		os.WriteFile(f, []byte(info), 0o600)
	}
	run := 1
	if f := env("FAKE_RUNS_FILE"); f != "" {
		b, _ := os.ReadFile(f)
		run = bytes.Count(b, []byte("\n")) + 1
		os.WriteFile(f, append(b, "run\n"...), 0o600)
	}
	if f := env("FAKE_WAIT_FIFO"); f != "" {
		fifo, err := os.Open(f) // blocks until the test opens it for writing
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		io.Copy(io.Discard, fifo)
		fifo.Close()
	}
	if env("FAKE_FAIL") != "" {
		// Not the variable's value: environment values are cut out of
		// the stderr shown in errors.
		fmt.Fprintln(os.Stderr, "error: you must log in first")
		fmt.Println(`{"status":{"token":"printed-before-failing"}}`)
		return 3
	}
	if raw := env("FAKE_RAW"); raw != "" {
		fmt.Print(raw)
		return 0
	}
	var in struct {
		APIVersion string `json:"apiVersion"`
	}
	json.Unmarshal([]byte(info), &in)
	sub := func(s string) string { return strings.ReplaceAll(s, "{run}", strconv.Itoa(run)) }
	status := map[string]string{}
	if tok := env("FAKE_TOKEN"); tok != "" {
		status["token"] = sub(tok)
	}
	if f := env("FAKE_CERT"); f != "" {
		c, _ := os.ReadFile(sub(f))
		k, _ := os.ReadFile(sub(env("FAKE_KEY")))
		status["clientCertificateData"], status["clientKeyData"] = string(c), string(k)
	}
	if exp := env("FAKE_EXPIRY"); exp != "" {
		// Each run's credential lives FAKE_EXPIRY_EVERY longer.
		t, _ := time.Parse(time.RFC3339, exp)
		every, _ := time.ParseDuration(env("FAKE_EXPIRY_EVERY"))
		status["expirationTimestamp"] = t.Add(time.Duration(run-1) * every).Format(time.RFC3339)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"apiVersion": in.APIVersion, "kind": "ExecCredential", "status": status})
	return 0
}

// fakePluginConfig runs the fake plugin with the given FAKE_* settings.
func fakePluginConfig(t *testing.T, apiVersion string, env ...string) *ExecConfig {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	e := &ExecConfig{Command: self, APIVersion: apiVersion, Env: []ExecEnvVar{
		{"LISTWATCH_FAKE_PLUGIN", "1"},
		// A -race binary otherwise lingers a second after a clean exit.
		{"GORACE", "atexit_sleep_ms=0"},
	}}
	for i := 0; i+1 < len(env); i += 2 {
		e.Env = append(e.Env, ExecEnvVar{env[i], env[i+1]})
	}
	return e
}

func runs(t *testing.T, file string) int {
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	require.NoError(t, err)
	return bytes.Count(b, []byte("\n"))
}

func TestExecToken(t *testing.T) {
	for _, version := range []string{ExecAPIVersionV1, ExecAPIVersionV1beta1} {
		t.Run(version, func(t *testing.T) {
			ca := newTestCA(t, "ca")
			srv := newTLSServer(t, ca, false, http.HandlerFunc(echo))
			dir := t.TempDir()
			infoFile, runsFile := filepath.Join(dir, "info.json"), filepath.Join(dir, "runs")
			exec := fakePluginConfig(t, version, "FAKE_TOKEN", "tok-{run}", "FAKE_INFO_FILE", infoFile, "FAKE_RUNS_FILE", runsFile,
				"SECRET_FOR_PLUGIN", "hunter2")
			exec.ProvideClusterInfo = true
			exec.ClusterConfig = json.RawMessage(`{"audience":"kube"}`)
			cfg := &Config{Host: srv.URL, CAData: ca.pem, ServerName: "kubernetes.test", Exec: exec}
			rt, err := cfg.RoundTripper()
			require.NoError(t, err)
			closeIdle(t, rt)
			for range 3 {
				s, code, err := getWith(t, rt, srv.URL)
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, code)
				require.Equal(t, "Bearer tok-1", s.Authorization)
			}
			require.Equal(t, 1, runs(t, runsFile), "no expiry: one run serves every request")

			info, err := os.ReadFile(infoFile)
			require.NoError(t, err)
			require.JSONEq(t, fmt.Sprintf(`{
				"apiVersion": %q, "kind": "ExecCredential",
				"spec": {"interactive": false, "cluster": {
					"server": %q, "tls-server-name": "kubernetes.test",
					"certificate-authority-data": %q, "config": {"audience":"kube"}}}}`,
				version, srv.URL, base64.StdEncoding.EncodeToString(ca.pem)), string(info))
		})
	}
}

func TestExecNoClusterInfoUnlessAsked(t *testing.T) {
	valid := "tok-1"
	srv, _ := tokenServer(t, &valid)
	infoFile := filepath.Join(t.TempDir(), "info.json")
	exec := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_TOKEN", "tok-1", "FAKE_INFO_FILE", infoFile)
	exec.InteractiveMode = "IfAvailable"
	_, code, err := get(t, &Config{Host: srv.URL, Exec: exec})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	info, err := os.ReadFile(infoFile)
	require.NoError(t, err)
	require.JSONEq(t, `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}`, string(info))
}

func TestExecExpiry(t *testing.T) {
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(expiry.Add(-time.Hour))
	valid := "tok-1"
	srv, _ := tokenServer(t, &valid)
	runsFile := filepath.Join(t.TempDir(), "runs")
	exec := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_TOKEN", "tok-{run}", "FAKE_RUNS_FILE", runsFile,
		"FAKE_EXPIRY", expiry.Format(time.RFC3339), "FAKE_EXPIRY_EVERY", "1h")
	rt, err := (&Config{Host: srv.URL, Exec: exec, Clock: clk}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	s, _, err := getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "Bearer tok-1", s.Authorization)
	clk.Set(expiry.Add(-time.Nanosecond))
	s, _, _ = getWith(t, rt, srv.URL)
	require.Equal(t, "Bearer tok-1", s.Authorization, "cached until expirationTimestamp")
	require.Equal(t, 1, runs(t, runsFile))

	clk.Set(expiry)
	valid = "tok-2"
	s, code, _ := getWith(t, rt, srv.URL)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer tok-2", s.Authorization, "expired: the plugin runs again")
	require.Equal(t, 2, runs(t, runsFile))
}

func TestExecRerunOn401(t *testing.T) {
	valid := "tok-2" // the server already revoked the first token
	srv, seenTokens := tokenServer(t, &valid)
	runsFile := filepath.Join(t.TempDir(), "runs")
	exec := fakePluginConfig(t, ExecAPIVersionV1beta1, "FAKE_TOKEN", "tok-{run}", "FAKE_RUNS_FILE", runsFile)
	rt, err := (&Config{Host: srv.URL, Exec: exec}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	req, err := http.NewRequest(http.MethodPut, srv.URL+"/api/v1/namespaces/x", strings.NewReader("payload"))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var s seen
	require.NoError(t, jsonDecode(resp.Body, &s))
	require.Equal(t, "payload", s.Body)
	require.Equal(t, map[string]int{"tok-1": 1, "tok-2": 1}, seenTokens)
	require.Equal(t, 2, runs(t, runsFile))

	// A plugin that keeps printing a rejected token is not retried forever.
	valid = "tok-99"
	_, code, err := getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, 3, runs(t, runsFile), "one re-run and one retry, not a loop")
}

func TestExecClientCertificate(t *testing.T) {
	ca := newTestCA(t, "ca")
	srv := newTLSServer(t, ca, true, http.HandlerFunc(echo))
	dir := t.TempDir()
	for i, cn := range []string{"alice", "bob"} {
		c, k := ca.issue(t, cn, false)
		writeFile(t, dir, fmt.Sprintf("cert-%d.pem", i+1), c)
		writeFile(t, dir, fmt.Sprintf("key-%d.pem", i+1), k)
	}
	expiry := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(expiry.Add(-time.Hour))
	exec := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_CERT", dir+"/cert-{run}.pem", "FAKE_KEY", dir+"/key-{run}.pem",
		"FAKE_EXPIRY", expiry.Format(time.RFC3339), "FAKE_EXPIRY_EVERY", "1h", "FAKE_RUNS_FILE", dir+"/runs")
	rt, err := (&Config{Host: srv.URL, CAData: ca.pem, Exec: exec, Clock: clk}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	s, code, err := getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "alice", s.ClientCN)
	require.Empty(t, s.Authorization)

	// Once the certificate expires, the kept-alive connection (which
	// presented alice) must not be reused.
	clk.Set(expiry)
	s, _, err = getWith(t, rt, srv.URL)
	require.NoError(t, err)
	s, _, err = getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, "bob", s.ClientCN)
}

func TestExecErrors(t *testing.T) {
	hint := "Install the plugin with: brew install fake-auth-plugin"
	tests := []struct {
		name   string
		exec   *ExecConfig
		want   []string
		is     error
		secret string
	}{
		{
			name: "not installed (PATH lookup)",
			exec: &ExecConfig{Command: "listwatch-no-such-plugin", APIVersion: ExecAPIVersionV1, InstallHint: hint},
			want: []string{"exec plugin listwatch-no-such-plugin is not installed", hint},
			is:   exec.ErrNotFound,
		},
		{
			name: "not installed (path)",
			exec: &ExecConfig{Command: "/nonexistent/bin/plugin", APIVersion: ExecAPIVersionV1, InstallHint: hint},
			want: []string{"exec plugin /nonexistent/bin/plugin is not installed", hint},
			is:   os.ErrNotExist,
		},
		{
			name:   "fails",
			exec:   fakePluginConfig(t, ExecAPIVersionV1, "FAKE_FAIL", "1", "PLUGIN_PASSWORD", "hunter2"),
			want:   []string{"exit status 3", "its stderr ends: error: you must log in first"},
			secret: "printed-before-failing",
		},
		{
			name:   "not JSON",
			exec:   fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", "token: hunter2"),
			want:   []string{"decode its ExecCredential: invalid character"},
			secret: "hunter2",
		},
		{
			name: "wrong apiVersion",
			exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"hunter2"}}`),
			want: []string{`printed apiVersion "client.authentication.k8s.io/v1beta1", want "client.authentication.k8s.io/v1"`},
		},
		{
			name: "no status",
			exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential"}`),
			want: []string{"printed no status"},
		},
		{
			name: "empty status",
			exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}}`),
			want: []string{"printed neither a token nor a client certificate"},
		},
		{
			name: "cert without key",
			exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"clientCertificateData":"x"}}`),
			want: []string{"only one of clientCertificateData and clientKeyData"},
		},
		{
			name:   "token of the wrong type",
			exec:   fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":["hunter2"]}}`),
			want:   []string{"cannot unmarshal array"},
			secret: "hunter2",
		},
		{
			name: "bad expiry",
			exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_RAW", `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"hunter2","expirationTimestamp":"tomorrow"}}`),
			want: []string{"expirationTimestamp is not an RFC 3339 time"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := get(t, &Config{Host: "http://127.0.0.1:1", Exec: tt.exec})
			require.Error(t, err)
			for _, w := range tt.want {
				require.Contains(t, err.Error(), w)
			}
			require.Contains(t, err.Error(), "GET http://127.0.0.1:1/api/v1/namespaces: get credentials: ")
			if tt.is != nil {
				require.ErrorIs(t, err, tt.is)
			}
			require.NotContains(t, err.Error(), "hunter2")
			if tt.secret != "" {
				require.NotContains(t, err.Error(), tt.secret)
			}
		})
	}
}

func TestExecConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no command", Config{Exec: &ExecConfig{APIVersion: ExecAPIVersionV1}}, "Exec.Command is empty"},
		{"no apiVersion", Config{Exec: &ExecConfig{Command: "p"}}, "exec plugin p: apiVersion is missing"},
		{"v1alpha1", Config{Exec: &ExecConfig{Command: "p", APIVersion: "client.authentication.k8s.io/v1alpha1"}}, `apiVersion "client.authentication.k8s.io/v1alpha1" is not supported`},
		{"interactive", Config{Exec: &ExecConfig{Command: "p", APIVersion: ExecAPIVersionV1, InteractiveMode: "Always"}}, "needs a terminal (interactiveMode: Always)"},
		{"bad mode", Config{Exec: &ExecConfig{Command: "p", APIVersion: ExecAPIVersionV1, InteractiveMode: "Sometimes"}}, `interactiveMode "Sometimes"`},
		{"bad env", Config{Exec: &ExecConfig{Command: "p", APIVersion: ExecAPIVersionV1, Env: []ExecEnvVar{{"A=B", "x"}}}}, `env[0] has an invalid name "A=B"`},
		{"with token", Config{BearerToken: "t", Exec: &ExecConfig{Command: "p", APIVersion: ExecAPIVersionV1}}, "set only one of"},
		{"with cert", Config{CertData: []byte("c"), KeyData: []byte("k"), Exec: &ExecConfig{Command: "p", APIVersion: ExecAPIVersionV1}}, "cannot be combined with Exec"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Host = "https://x"
			_, err := tt.cfg.RoundTripper()
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestExecCertWithCustomTransport(t *testing.T) {
	ca := newTestCA(t, "ca")
	c, k := ca.issue(t, "alice", false)
	dir := t.TempDir()
	exec := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_CERT", writeFile(t, dir, "c", c), "FAKE_KEY", writeFile(t, dir, "k", k))
	_, _, err := get(t, &Config{Host: "http://127.0.0.1:1", Exec: exec, Transport: http.DefaultTransport})
	require.ErrorContains(t, err, "returned a client certificate, which Config.Transport cannot present")
}

// spyContext reports when a goroutine starts waiting on it, which the exec
// authenticator does only while it waits for a plugin run.
type spyContext struct {
	context.Context
	once    sync.Once
	waiting chan struct{}
}

func (c *spyContext) Done() <-chan struct{} {
	c.once.Do(func() { close(c.waiting) })
	return c.Context.Done()
}

func TestExecConcurrentRequestsShareOneRun(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	runsFile := filepath.Join(dir, "runs")
	cfg := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_TOKEN", "tok-{run}", "FAKE_RUNS_FILE", runsFile, "FAKE_WAIT_FIFO", fifo,
		// Already expired: every caller that did not join the run would
		// start another.
		"FAKE_EXPIRY", "2000-01-01T00:00:00Z")
	a := newExecAuth(cfg, nil, clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))

	const n = 8
	got := make(chan credential, n)
	errs := make(chan error, n)
	var ctxs []*spyContext
	for range n {
		ctx := &spyContext{Context: context.Background(), waiting: make(chan struct{})}
		ctxs = append(ctxs, ctx)
		go func() {
			c, err := a.credential(ctx)
			got <- c
			errs <- err
		}()
	}
	for _, ctx := range ctxs {
		testwait.Recv(t, ctx.waiting, "every caller to wait on the one running plugin")
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // lets the plugin finish
	require.NoError(t, err)
	require.NoError(t, w.Close())
	for range n {
		require.NoError(t, testwait.Recv(t, errs, "each caller's credential"))
		require.Equal(t, "Bearer tok-1", testwait.Recv(t, got, "each caller's credential").authorization)
	}
	require.Equal(t, 1, runs(t, runsFile))
}

func TestExecWaitHonoursContext(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	cfg := fakePluginConfig(t, ExecAPIVersionV1, "FAKE_TOKEN", "tok", "FAKE_WAIT_FIFO", fifo)
	a := newExecAuth(cfg, nil, clock.Real)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := a.credential(ctx)
	require.ErrorIs(t, err, context.Canceled)

	// The run goes on for the callers behind; let it finish.
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	c, err := a.credential(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Bearer tok", c.authorization)
}
