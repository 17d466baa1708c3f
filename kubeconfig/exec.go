package kubeconfig

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/redact"
)

// API versions of the ExecCredential exchanged with a credential plugin.
const (
	ExecAPIVersionV1      = "client.authentication.k8s.io/v1"
	ExecAPIVersionV1beta1 = "client.authentication.k8s.io/v1beta1"
)

// ExecConfig runs a credential plugin, as a kubeconfig user's "exec" entry
// does: EKS (aws eks get-token), GKE (gke-gcloud-auth-plugin), AKS
// (kubelogin) and OIDC helpers all work this way.
//
// The plugin runs on the first request, never interactively (stdin is
// empty and spec.interactive is false). Its token or client certificate is
// cached until its expirationTimestamp, shared by every request of the
// transport, and fetched anew when it expires or when the server answers
// 401. Concurrent requests wait for one run. A run that does not finish
// within a minute is killed together with every process it started; once
// the plugin has exited, a background child of it still holding its output
// is killed after two seconds. At most 1 MiB of output is read.
type ExecConfig struct {
	// Command is the plugin executable, looked up in PATH unless it holds
	// a path separator.
	Command string
	Args    []string
	// Env is added to this process's environment for the plugin. Values are
	// treated as secrets: they are never printed.
	Env []ExecEnvVar
	// APIVersion is ExecAPIVersionV1 or ExecAPIVersionV1beta1.
	APIVersion string
	// InstallHint is shown when Command is not found.
	InstallHint string
	// ProvideClusterInfo passes the server URL, CA and ClusterConfig to the
	// plugin in KUBERNETES_EXEC_INFO.
	ProvideClusterInfo bool
	// InteractiveMode is "Never", "IfAvailable" or empty; "Always" is
	// rejected because no terminal is ever given to the plugin.
	InteractiveMode string
	// ClusterConfig is the cluster's "client.authentication.k8s.io/exec"
	// extension, passed as spec.cluster.config with ProvideClusterInfo.
	ClusterConfig json.RawMessage
}

// ExecEnvVar is one environment variable for a credential plugin.
type ExecEnvVar struct {
	Name  string
	Value string
}

// execTimeout bounds one plugin run. Plugins that talk to a cloud's token
// service take a second or two; a run never waits for a human.
const execTimeout = time.Minute

// execWaitDelay is how long a run waits for the plugin's output pipes to
// close once the plugin has exited (or been killed): a background child
// that inherited them must not hold the run open.
const execWaitDelay = 2 * time.Second

// maxExecOutput caps what is read of a plugin's stdout. An ExecCredential
// with a client certificate is a few KB; anything near the cap is a plugin
// gone wrong, and reading on would only grow the heap.
const maxExecOutput = 1 << 20

func (e *ExecConfig) validate() error {
	if e.Command == "" {
		return errors.New("config: Exec.Command is empty")
	}
	switch e.APIVersion {
	case ExecAPIVersionV1, ExecAPIVersionV1beta1:
	case "":
		return fmt.Errorf("config: exec plugin %s: apiVersion is missing; want %s or %s", e.Command, ExecAPIVersionV1, ExecAPIVersionV1beta1)
	default:
		return fmt.Errorf("config: exec plugin %s: apiVersion %q is not supported; want %s or %s", e.Command, e.APIVersion, ExecAPIVersionV1, ExecAPIVersionV1beta1)
	}
	switch e.InteractiveMode {
	case "", "Never", "IfAvailable":
	case "Always":
		return fmt.Errorf("config: exec plugin %s needs a terminal (interactiveMode: Always), which listwatch never gives a plugin; log in with the plugin once in a shell, or choose a non-interactive mode of it", e.Command)
	default:
		return fmt.Errorf("config: exec plugin %s: interactiveMode %q is not Never, IfAvailable or Always", e.Command, e.InteractiveMode)
	}
	for i, v := range e.Env {
		if v.Name == "" || strings.ContainsAny(v.Name, "=\x00") {
			return fmt.Errorf("config: exec plugin %s: env[%d] has an invalid name %q", e.Command, i, v.Name)
		}
	}
	return nil
}

// execCluster is spec.cluster of the ExecCredential given to the plugin.
type execCluster struct {
	Server     string          `json:"server"`
	ServerName string          `json:"tls-server-name,omitempty"`
	Insecure   bool            `json:"insecure-skip-tls-verify,omitempty"`
	CAData     []byte          `json:"certificate-authority-data,omitempty"`
	ProxyURL   string          `json:"proxy-url,omitempty"`
	Config     json.RawMessage `json:"config,omitempty"`
}

// execCreds is one plugin answer; immutable once published.
type execCreds struct {
	token   string
	cert    *tls.Certificate
	certPEM string
	keyPEM  string
	expiry  time.Time // zero: never expires
	id      uint64
}

func (c *execCreds) same(o *execCreds) bool {
	return c.token == o.token && c.certPEM == o.certPEM && c.keyPEM == o.keyPEM
}

type execFlight struct {
	done  chan struct{}
	creds *execCreds
	err   error
}

type execAuth struct {
	cfg   ExecConfig
	info  string // KUBERNETES_EXEC_INFO
	clock clock.Clock
	// onCertChange drops idle connections, which still present the old
	// client certificate. certUnusable is set when the caller's own
	// Transport cannot present one at all.
	onCertChange func()
	certUnusable bool
	// timeout bounds a run; waitDelay is how long output is awaited
	// after the plugin exits or is killed.
	timeout, waitDelay time.Duration

	mu     sync.Mutex
	cur    *execCreds // nil: never fetched, or rejected by the server
	last   *execCreds // the newest answer, to tell whether a run changed anything
	flight *execFlight
	ids    uint64
}

func newExecAuth(cfg *ExecConfig, cluster *execCluster, clk clock.Clock) *execAuth {
	type spec struct {
		Interactive bool         `json:"interactive"`
		Cluster     *execCluster `json:"cluster,omitempty"`
	}
	info, _ := json.Marshal(struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Spec       spec   `json:"spec"`
	}{cfg.APIVersion, "ExecCredential", spec{Cluster: cluster}})
	return &execAuth{cfg: *cfg, info: string(info), clock: clk, timeout: execTimeout, waitDelay: execWaitDelay}
}

func (a *execAuth) credential(ctx context.Context) (credential, error) {
	c, err := a.get(ctx)
	if err != nil {
		return credential{}, err
	}
	if c.cert != nil && a.certUnusable {
		return credential{}, fmt.Errorf("exec plugin %s returned a client certificate, which Config.Transport cannot present", a.cfg.Command)
	}
	return c.credential(), nil
}

func (c *execCreds) credential() credential {
	cr := credential{id: c.id}
	if c.token != "" {
		cr.authorization = "Bearer " + c.token
	}
	return cr
}

func (a *execAuth) refresh(ctx context.Context, rejected credential) (credential, bool) {
	a.mu.Lock()
	if a.cur != nil && a.cur.id == rejected.id {
		a.cur = nil
	}
	a.mu.Unlock()
	c, err := a.get(ctx)
	if err != nil {
		return credential{}, false
	}
	return c.credential(), c.id != rejected.id
}

// clientCertificate is tls.Config.GetClientCertificate: the plugin's
// certificate, or none when it returns only a token.
func (a *execAuth) clientCertificate(info *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	c, err := a.get(info.Context())
	if err != nil {
		return nil, err
	}
	if c.cert == nil {
		return &tls.Certificate{}, nil
	}
	return c.cert, nil
}

// get returns valid cached credentials or waits for a plugin run, starting
// one unless one is under way.
func (a *execAuth) get(ctx context.Context) (*execCreds, error) {
	a.mu.Lock()
	if c := a.cur; c != nil && (c.expiry.IsZero() || a.clock.Now().Before(c.expiry)) {
		a.mu.Unlock()
		return c, nil
	}
	f := a.flight
	if f == nil {
		f = &execFlight{done: make(chan struct{})}
		a.flight = f
		// The run outlives a caller that gives up, so its answer still
		// serves the callers behind it.
		go a.run(f)
	}
	a.mu.Unlock()
	select {
	case <-f.done:
		return f.creds, f.err
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for exec plugin %s: %w", a.cfg.Command, ctx.Err())
	}
}

func (a *execAuth) run(f *execFlight) {
	c, err := a.exec()
	certChanged := false
	a.mu.Lock()
	a.flight = nil
	if err == nil {
		if a.last != nil && a.last.same(c) {
			c.id = a.last.id
		} else {
			a.ids++
			c.id = a.ids
			certChanged = a.last != nil && a.last.certPEM != c.certPEM
		}
		a.cur, a.last = c, c
	}
	a.mu.Unlock()
	// Before the waiters go on, or one of them could pick up a kept-alive
	// connection that presented the old certificate.
	if certChanged && a.onCertChange != nil {
		a.onCertChange()
	}
	f.creds, f.err = c, err
	close(f.done)
}

// exec runs the plugin once and parses its ExecCredential.
func (a *execAuth) exec() (*execCreds, error) {
	ctx, cancel := context.WithTimeout(context.Background(), a.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.cfg.Command, a.cfg.Args...)
	cmd.Env = os.Environ()
	for _, v := range a.cfg.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	cmd.Env = append(cmd.Env, "KUBERNETES_EXEC_INFO="+a.info)
	stdout := &cappedBuffer{max: maxExecOutput}
	stderr := &tailBuffer{max: 2 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Without WaitDelay, Run waits for every process holding the output
	// pipes, however long a forgotten background child lives.
	cmd.WaitDelay = a.waitDelay
	ownProcessGroup(cmd)
	// Run returns within timeout+WaitDelay whatever the plugin does, so
	// the run (and every request waiting on it) ends in bounded time.
	err := cmd.Run()
	if errors.Is(err, exec.ErrWaitDelay) {
		// The plugin exited 0 and its answer is complete; a child of it
		// still held the pipes. Nothing of the plugin's should outlive it.
		killProcessGroup(cmd)
		err = nil
	}
	switch {
	case stdout.full:
		return nil, fmt.Errorf("exec plugin %s printed more than %d MiB; an ExecCredential is a few KB", a.cfg.Command, maxExecOutput>>20)
	case err == nil:
		return a.parse(stdout.b)
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist):
		hint := ""
		if a.cfg.InstallHint != "" {
			hint = "\n\n" + strings.TrimSpace(a.cfg.InstallHint)
		}
		return nil, &missingPlugin{command: a.cfg.Command, err: err, hint: hint}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		err = fmt.Errorf("exec plugin %s did not finish within %v and was killed: %w", a.cfg.Command, a.timeout, err)
	default:
		err = fmt.Errorf("exec plugin %s: %w", a.cfg.Command, err)
	}
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		msg = redact.Opaque(msg, a.secrets(stdout.b))
		return nil, fmt.Errorf("%w; its stderr ends: %s", err, msg)
	}
	return nil, err
}

// ErrExecPluginMissing is wrapped by the error of every request whose
// credentials come from an exec plugin that is not installed, or not where
// the kubeconfig says. Retrying cannot cure it: the request is not
// retried, and httpwatch.IsPermanent reports it, so the log says it at
// once at Error with what to do and waits return it (decision 20).
var ErrExecPluginMissing = errors.New("exec credential plugin not installed")

// missingPlugin is the error of a plugin that could not be started
// because its command does not exist.
type missingPlugin struct {
	command string
	err     error
	hint    string // the kubeconfig's installHint, with its separator
}

func (e *missingPlugin) Error() string {
	return fmt.Sprintf("exec plugin %s is not installed: %v%s", e.command, e.err, e.hint)
}

func (e *missingPlugin) Unwrap() []error { return []error{ErrExecPluginMissing, e.err} }

// secrets are what an error about the plugin must not show: the values
// of its environment variables and whatever credential it printed, read
// from the first JSON value of its output even when more follows.
func (a *execAuth) secrets(stdout []byte) []string {
	var s []string
	for _, v := range a.cfg.Env {
		s = append(s, v.Value)
	}
	var cred struct {
		Status struct {
			Token      string `json:"token"`
			ClientKey  string `json:"clientKeyData"`
			ClientCert string `json:"clientCertificateData"`
		} `json:"status"`
	}
	if json.NewDecoder(bytes.NewReader(stdout)).Decode(&cred) == nil {
		s = append(s, cred.Status.Token, cred.Status.ClientKey, cred.Status.ClientCert)
	}
	return s
}

// shown is a value the plugin printed, as an error may quote it: cut
// short, and with its credentials and anything shaped like one redacted.
func (a *execAuth) shown(v string, stdout []byte) string {
	const max = 64
	if len(v) > max {
		v = v[:max] + "..."
	}
	return strconv.Quote(redact.Opaque(v, a.secrets(stdout)))
}

func (a *execAuth) parse(out []byte) (*execCreds, error) {
	var cred struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Status     *struct {
			ExpirationTimestamp string `json:"expirationTimestamp"`
			Token               string `json:"token"`
			ClientCertificate   string `json:"clientCertificateData"`
			ClientKey           string `json:"clientKeyData"`
		} `json:"status"`
	}
	// json errors name the offending type and offset, never the input, so
	// they cannot leak the token.
	if err := json.Unmarshal(out, &cred); err != nil {
		return nil, fmt.Errorf("exec plugin %s: decode its ExecCredential: %w", a.cfg.Command, err)
	}
	switch {
	case cred.Kind != "ExecCredential":
		return nil, fmt.Errorf("exec plugin %s printed kind %s, want ExecCredential", a.cfg.Command, a.shown(cred.Kind, out))
	case cred.APIVersion != a.cfg.APIVersion:
		return nil, fmt.Errorf("exec plugin %s printed apiVersion %s, want %q as configured", a.cfg.Command, a.shown(cred.APIVersion, out), a.cfg.APIVersion)
	case cred.Status == nil:
		return nil, fmt.Errorf("exec plugin %s printed no status", a.cfg.Command)
	}
	s := cred.Status
	c := &execCreds{token: s.Token, certPEM: s.ClientCertificate, keyPEM: s.ClientKey}
	if (s.ClientCertificate == "") != (s.ClientKey == "") {
		return nil, fmt.Errorf("exec plugin %s printed only one of clientCertificateData and clientKeyData", a.cfg.Command)
	}
	if s.ClientCertificate != "" {
		cert, err := tls.X509KeyPair([]byte(s.ClientCertificate), []byte(s.ClientKey))
		if err != nil {
			return nil, fmt.Errorf("exec plugin %s: load its client certificate: %w", a.cfg.Command, err)
		}
		c.cert = &cert
	}
	if s.Token == "" && c.cert == nil {
		return nil, fmt.Errorf("exec plugin %s printed neither a token nor a client certificate", a.cfg.Command)
	}
	if s.ExpirationTimestamp != "" {
		t, err := time.Parse(time.RFC3339, s.ExpirationTimestamp)
		if err != nil {
			// The parser's error quotes the value, which may be anything
			// the plugin printed, the token included.
			return nil, fmt.Errorf("exec plugin %s: expirationTimestamp is not an RFC 3339 time such as 2006-01-02T15:04:05Z (%d bytes)", a.cfg.Command, len(s.ExpirationTimestamp))
		}
		c.expiry = t
	}
	return c, nil
}

// tailBuffer keeps the last max bytes written: a failing plugin's last words.
type tailBuffer struct {
	max int
	b   []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
		t.cut = true
	}
	return len(p), nil
}

// String is the whole lines kept. A line the cut began in is dropped: its
// end may be the end of a secret, which no redaction would recognise.
func (t *tailBuffer) String() string {
	if !t.cut {
		return string(t.b)
	}
	i := bytes.IndexByte(t.b, '\n')
	if i < 0 {
		return ""
	}
	return string(t.b[i+1:])
}

// cappedBuffer keeps up to max bytes and fails the write that would exceed
// them, which closes the pipe and so stops the plugin writing.
type cappedBuffer struct {
	b    []byte
	max  int
	full bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if len(c.b)+len(p) > c.max {
		c.full = true
		return 0, errExecOutputFull
	}
	c.b = append(c.b, p...)
	return len(p), nil
}

var errExecOutputFull = errors.New("plugin output exceeds the cap")
