package kubeconfig

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/listwatch/listwatch/internal/redact"
)

// ErrNoContext is wrapped by Load and FromEnvironment when the
// context asked for (or the current-context) is not defined.
var ErrNoContext = errors.New("kubeconfig context not found")

// Error is a problem with one entry of a kubeconfig file. Field is
// a path into the YAML such as `users["alice"].user.client-key-data`; it is
// empty when the whole file is at fault. Line is 0 when unknown. Err never
// holds a secret value.
type Error struct {
	File  string
	Line  int
	Field string
	Err   error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("kubeconfig ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// Load reads the kubeconfig file at path and returns the Config of
// the named context, or of the file's current-context when context is
// empty. Relative paths in the file resolve against the file's folder. The
// files the entry names (CA, client certificate and key, token file) must
// exist; they are read by RoundTripper.
//
// Supported: server, certificate-authority(-data), insecure-skip-tls-verify,
// tls-server-name, proxy-url; client-certificate(-data),
// client-key(-data), token, tokenFile (token wins when both are set, as in
// kubectl), username/password, exec, as/as-uid/as-groups/as-user-extra; the
// context's namespace ("default" when unset). A user with a legacy
// auth-provider gets an error naming the exec plugin that replaced it.
func Load(path, context string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig: %w", err)
	}
	kc, err := parseKubeconfig(path, data)
	if err != nil {
		return nil, err
	}
	var set kubeconfigSet
	set.add(kc)
	return set.config(context)
}

// FromEnvironment returns the Config kubectl would use for context (empty
// means the current-context):
//
//   - if KUBECONFIG is set, the files it lists (separated by ':' or ';' on
//     Windows), merged: files that do not exist are skipped; the first file
//     to define a cluster, user or context name wins that name whole (a later
//     file's fields for the same name are ignored, not merged), and the first
//     file to set current-context wins;
//   - otherwise ~/.kube/config, if it exists;
//   - when those define nothing at all and context is empty, InCluster.
//
// Outside a cluster with no kubeconfig, the error wraps ErrNotInCluster.
func FromEnvironment(context string) (*Config, error) {
	home, _ := os.UserHomeDir()
	return fromEnvironment(context, os.Getenv, home, InCluster)
}

func fromEnvironment(context string, getenv func(string) string, home string, inCluster func() (*Config, error)) (*Config, error) {
	var paths []string
	if env := getenv("KUBECONFIG"); env != "" {
		for _, p := range filepath.SplitList(env) {
			if p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	} else if home != "" {
		paths = []string{filepath.Join(home, ".kube", "config")}
	}
	var set kubeconfigSet
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("load kubeconfig: %w", err)
		}
		kc, err := parseKubeconfig(p, data)
		if err != nil {
			return nil, err
		}
		set.add(kc)
	}
	if !set.empty() {
		return set.config(context)
	}
	looked := strings.Join(paths, ", ")
	if looked == "" {
		looked = "nowhere: neither KUBECONFIG nor HOME is set"
	}
	if context != "" {
		return nil, fmt.Errorf("%w: %q: no kubeconfig defines anything (looked in %s)", ErrNoContext, context, looked)
	}
	cfg, err := inCluster()
	if errors.Is(err, ErrNotInCluster) {
		return nil, fmt.Errorf("no kubeconfig defines anything (looked in %s), and %w", looked, err)
	}
	return cfg, err
}

// kubeconfig is one parsed file.
type kubeconfig struct {
	path           string
	currentContext string
	clusters       map[string]*kcCluster
	users          map[string]*kcUser
	contexts       map[string]*kcContext
}

// kcEntry says where a named entry was defined, for errors.
type kcEntry struct {
	name  string
	file  string
	line  int
	field string // e.g. `clusters["prod"].cluster`
}

func (e kcEntry) errorf(field, format string, args ...any) error {
	return &Error{File: e.file, Line: e.line, Field: e.field + field, Err: fmt.Errorf(format, args...)}
}

type kcCluster struct {
	kcEntry
	server, caFile, serverName, proxyURL string
	caData                               []byte
	insecure                             bool
	execConfig                           json.RawMessage
}

type kcUser struct {
	kcEntry
	token, tokenFile, username, password string
	certFile, keyFile                    string
	certData, keyData                    []byte
	exec                                 *ExecConfig
	authProvider                         string
	imp                                  Impersonation
}

type kcContext struct {
	kcEntry
	cluster, user, namespace string
}

// kubeconfigSet is several files merged by kubectl's rules.
type kubeconfigSet struct {
	files          []string
	currentContext string
	clusters       map[string]*kcCluster
	users          map[string]*kcUser
	contexts       map[string]*kcContext
}

func (s *kubeconfigSet) add(kc *kubeconfig) {
	s.files = append(s.files, kc.path)
	if s.currentContext == "" {
		s.currentContext = kc.currentContext
	}
	s.clusters = mergeFirst(s.clusters, kc.clusters)
	s.users = mergeFirst(s.users, kc.users)
	s.contexts = mergeFirst(s.contexts, kc.contexts)
}

// mergeFirst adds the entries of src whose names dst lacks.
func mergeFirst[V any](dst, src map[string]V) map[string]V {
	if dst == nil {
		dst = map[string]V{}
	}
	for k, v := range src {
		if _, ok := dst[k]; !ok {
			dst[k] = v
		}
	}
	return dst
}

func (s *kubeconfigSet) empty() bool {
	return s.currentContext == "" && len(s.clusters) == 0 && len(s.users) == 0 && len(s.contexts) == 0
}

func (s *kubeconfigSet) where() string {
	if len(s.files) == 1 {
		return s.files[0]
	}
	return "[" + strings.Join(s.files, ", ") + "]"
}

// config builds the Config of one context.
func (s *kubeconfigSet) config(name string) (*Config, error) {
	if name == "" {
		name = s.currentContext
		if name == "" {
			return nil, fmt.Errorf("%w: kubeconfig %s sets no current-context; name a context (defined: %s)", ErrNoContext, s.where(), names(s.contexts))
		}
	}
	ctx := s.contexts[name]
	if ctx == nil {
		return nil, fmt.Errorf("%w: kubeconfig %s defines no context %q (defined: %s)", ErrNoContext, s.where(), name, names(s.contexts))
	}
	if ctx.cluster == "" {
		return nil, ctx.errorf(".cluster", "missing")
	}
	cl := s.clusters[ctx.cluster]
	if cl == nil {
		return nil, ctx.errorf(".cluster", "cluster %q is not defined in %s", ctx.cluster, s.where())
	}
	cfg := &Config{
		Host:       cl.server,
		Namespace:  ctx.namespace,
		CAFile:     cl.caFile,
		CAData:     cl.caData,
		ServerName: cl.serverName,
		Insecure:   cl.insecure,
		ProxyURL:   cl.proxyURL,
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if err := cl.check(); err != nil {
		return nil, err
	}
	if ctx.user != "" {
		u := s.users[ctx.user]
		if u == nil {
			return nil, ctx.errorf(".user", "user %q is not defined in %s", ctx.user, s.where())
		}
		if err := u.apply(cfg, cl); err != nil {
			return nil, err
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: context %q: %w", s.where(), name, err)
	}
	return cfg, nil
}

func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "none"
	}
	ns := make([]string, 0, len(m))
	for k := range m {
		ns = append(ns, fmt.Sprintf("%q", k))
	}
	slices.Sort(ns)
	return strings.Join(ns, ", ")
}

func (c *kcCluster) check() error {
	if c.server == "" {
		return c.errorf(".server", "missing")
	}
	if u, err := url.Parse(c.server); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return c.errorf(".server", "%q is not an https:// or http:// URL", redact.URL(c.server))
	}
	if c.caFile != "" && len(c.caData) > 0 {
		return c.errorf("", "set certificate-authority or certificate-authority-data, not both")
	}
	if c.insecure && (c.caFile != "" || len(c.caData) > 0) {
		return c.errorf(".insecure-skip-tls-verify", "cannot be combined with a certificate-authority: verify against the CA or skip verification, not both")
	}
	return checkFile(c.kcEntry, ".certificate-authority", c.caFile)
}

// legacyProviders names what replaced each auth-provider kubectl dropped.
var legacyProviders = map[string]string{
	"gcp":   "the gke-gcloud-auth-plugin exec plugin (gcloud components install gke-gcloud-auth-plugin, then gcloud container clusters get-credentials)",
	"azure": "the kubelogin exec plugin (github.com/Azure/kubelogin: kubelogin convert-kubeconfig)",
	"oidc":  "an OIDC exec plugin such as kubelogin (github.com/int128/kubelogin: kubectl oidc-login)",
}

func (u *kcUser) apply(cfg *Config, cl *kcCluster) error {
	if u.authProvider != "" {
		repl, ok := legacyProviders[u.authProvider]
		if !ok {
			repl = "the exec credential plugin your provider documents"
		}
		return u.errorf(".auth-provider", "the legacy auth-provider %q is not supported (kubectl dropped built-in providers); use %s", u.authProvider, repl)
	}
	for _, f := range []struct {
		file  string
		data  []byte
		field string
	}{{u.certFile, u.certData, "client-certificate"}, {u.keyFile, u.keyData, "client-key"}} {
		if f.file != "" && len(f.data) > 0 {
			return u.errorf("", "set %s or %s-data, not both", f.field, f.field)
		}
		if err := checkFile(u.kcEntry, "."+f.field, f.file); err != nil {
			return err
		}
	}
	cfg.CertFile, cfg.CertData, cfg.KeyFile, cfg.KeyData = u.certFile, u.certData, u.keyFile, u.keyData
	switch {
	case u.token != "":
		cfg.BearerToken = u.token
	case u.tokenFile != "":
		if err := checkFile(u.kcEntry, ".tokenFile", u.tokenFile); err != nil {
			return err
		}
		cfg.BearerTokenFile = u.tokenFile
	}
	cfg.Username, cfg.Password = u.username, u.password
	cfg.Impersonate = u.imp
	if u.exec != nil {
		if err := u.exec.validate(); err != nil {
			return u.errorf(".exec", "%s", strings.TrimPrefix(err.Error(), "config: "))
		}
		e := *u.exec
		e.ClusterConfig = cl.execConfig
		cfg.Exec = &e
	}
	return nil
}

func checkFile(e kcEntry, field, path string) error {
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		return e.errorf(field, "%w", err)
	}
	return nil
}
