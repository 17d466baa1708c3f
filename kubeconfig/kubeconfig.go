package kubeconfig

import (
	"encoding/base64"
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
	"go.yaml.in/yaml/v3"
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

// kcParser walks a kubeconfig's YAML tree by hand, so every error can name
// the file, line and field, and never quote a secret value.
type kcParser struct {
	file, dir string
}

func parseKubeconfig(path string, data []byte) (*kubeconfig, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", path, err)
	}
	p := &kcParser{file: abs, dir: filepath.Dir(abs)}
	kc := &kubeconfig{path: abs, clusters: map[string]*kcCluster{}, users: map[string]*kcUser{}, contexts: map[string]*kcContext{}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: abs, Err: fmt.Errorf("not valid YAML: %w", err)}
	}
	if len(doc.Content) == 0 {
		return kc, nil // an empty file defines nothing, as for kubectl
	}
	err = p.mapping(doc.Content[0], "", func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "current-context":
			kc.currentContext, err = p.str(v, field)
		case "clusters":
			err = p.list(v, "clusters", "cluster", func(e kcEntry, body *yaml.Node) error {
				c := &kcCluster{kcEntry: e}
				kc.clusters[e.name] = c
				return p.cluster(c, body)
			})
		case "users":
			err = p.list(v, "users", "user", func(e kcEntry, body *yaml.Node) error {
				u := &kcUser{kcEntry: e}
				kc.users[e.name] = u
				return p.user(u, body)
			})
		case "contexts":
			err = p.list(v, "contexts", "context", func(e kcEntry, body *yaml.Node) error {
				c := &kcContext{kcEntry: e}
				kc.contexts[e.name] = c
				return p.mapping(body, e.field, func(key string, v *yaml.Node, field string) error {
					var err error
					switch key {
					case "cluster":
						c.cluster, err = p.str(v, field)
					case "user":
						c.user, err = p.str(v, field)
					case "namespace":
						c.namespace, err = p.str(v, field)
					}
					return err
				})
			})
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return kc, nil
}

func (p *kcParser) cluster(c *kcCluster, body *yaml.Node) error {
	return p.mapping(body, c.field, func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "server":
			c.server, err = p.str(v, field)
		case "certificate-authority":
			c.caFile, err = p.path(v, field)
		case "certificate-authority-data":
			c.caData, err = p.data(v, field)
		case "insecure-skip-tls-verify":
			c.insecure, err = p.boolean(v, field)
		case "tls-server-name":
			c.serverName, err = p.str(v, field)
		case "proxy-url":
			c.proxyURL, err = p.str(v, field)
		case "extensions":
			err = p.each(v, field, func(ext *yaml.Node, field string) error {
				var name string
				var value *yaml.Node
				if err := p.mapping(ext, field, func(key string, v *yaml.Node, field string) error {
					var err error
					switch key {
					case "name":
						name, err = p.str(v, field)
					case "extension":
						value = v
					}
					return err
				}); err != nil {
					return err
				}
				if name != "client.authentication.k8s.io/exec" || value == nil {
					return nil
				}
				var x any
				if err := value.Decode(&x); err != nil {
					return p.fail(value, field+".extension", err)
				}
				c.execConfig, err = json.Marshal(x)
				if err != nil {
					return p.fail(value, field+".extension", err)
				}
				return nil
			})
		}
		return err
	})
}

func (p *kcParser) user(u *kcUser, body *yaml.Node) error {
	return p.mapping(body, u.field, func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "client-certificate":
			u.certFile, err = p.path(v, field)
		case "client-certificate-data":
			u.certData, err = p.data(v, field)
		case "client-key":
			u.keyFile, err = p.path(v, field)
		case "client-key-data":
			u.keyData, err = p.data(v, field)
		case "token":
			u.token, err = p.str(v, field)
		case "tokenFile":
			u.tokenFile, err = p.path(v, field)
		case "username":
			u.username, err = p.str(v, field)
		case "password":
			u.password, err = p.str(v, field)
		case "as":
			u.imp.User, err = p.str(v, field)
		case "as-uid":
			u.imp.UID, err = p.str(v, field)
		case "as-groups":
			u.imp.Groups, err = p.strs(v, field)
		case "as-user-extra":
			err = p.mapping(v, field, func(key string, v *yaml.Node, field string) error {
				vs, err := p.strs(v, field)
				if u.imp.Extra == nil {
					u.imp.Extra = map[string][]string{}
				}
				u.imp.Extra[key] = vs
				return err
			})
		case "auth-provider":
			err = p.mapping(v, field, func(key string, v *yaml.Node, field string) error {
				var err error
				if key == "name" {
					u.authProvider, err = p.str(v, field)
				}
				return err
			})
			if err == nil && u.authProvider == "" && resolve(v).Kind == yaml.MappingNode {
				u.authProvider = "(unnamed)"
			}
		case "exec":
			u.exec, err = p.exec(v, field)
		}
		return err
	})
}

func (p *kcParser) exec(n *yaml.Node, field string) (*ExecConfig, error) {
	if isNull(n) {
		return nil, nil
	}
	e := &ExecConfig{}
	err := p.mapping(n, field, func(key string, v *yaml.Node, field string) error {
		var err error
		switch key {
		case "command":
			e.Command, err = p.str(v, field)
			// A relative path to a plugin shipped beside the kubeconfig
			// resolves like the other paths; a bare name is looked up in PATH.
			if strings.ContainsRune(e.Command, filepath.Separator) || strings.ContainsRune(e.Command, '/') {
				e.Command = p.resolve(e.Command)
			}
		case "args":
			e.Args, err = p.strs(v, field)
		case "env":
			err = p.each(v, field, func(item *yaml.Node, field string) error {
				var ev ExecEnvVar
				err := p.mapping(item, field, func(key string, v *yaml.Node, field string) error {
					var err error
					switch key {
					case "name":
						ev.Name, err = p.str(v, field)
					case "value":
						ev.Value, err = p.str(v, field)
					}
					return err
				})
				e.Env = append(e.Env, ev)
				return err
			})
		case "apiVersion":
			e.APIVersion, err = p.str(v, field)
		case "installHint":
			e.InstallHint, err = p.str(v, field)
		case "provideClusterInfo":
			e.ProvideClusterInfo, err = p.boolean(v, field)
		case "interactiveMode":
			e.InteractiveMode, err = p.str(v, field)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// list walks a named list such as clusters: [{name: x, cluster: {...}}].
func (p *kcParser) list(n *yaml.Node, section, inner string, fn func(kcEntry, *yaml.Node) error) error {
	seen := map[string]int{}
	return p.each(n, section, func(item *yaml.Node, field string) error {
		var name string
		var body *yaml.Node
		hasName := false
		if err := p.mapping(item, field, func(key string, v *yaml.Node, f string) error {
			var err error
			switch key {
			case "name":
				name, err = p.str(v, f)
				hasName = true
			case inner:
				body = v
			}
			return err
		}); err != nil {
			return err
		}
		if !hasName || name == "" {
			return p.fail(item, field, errors.New("name is missing"))
		}
		if line, dup := seen[name]; dup {
			return p.fail(item, field, fmt.Errorf("%q is defined twice in this file (first on line %d)", name, line))
		}
		seen[name] = item.Line
		e := kcEntry{name: name, file: p.file, line: item.Line, field: fmt.Sprintf("%s[%q].%s", section, name, inner)}
		return fn(e, body)
	})
}

func (p *kcParser) fail(n *yaml.Node, field string, err error) error {
	return &Error{File: p.file, Line: n.Line, Field: field, Err: err}
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	default:
		return "a scalar"
	}
}

// mapping calls fn for each key of a mapping node; null is an empty mapping.
func (p *kcParser) mapping(n *yaml.Node, field string, fn func(key string, v *yaml.Node, field string) error) error {
	if isNull(n) {
		return nil
	}
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return p.fail(n, field, fmt.Errorf("want a mapping, got %s", kindName(n)))
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		sub := k.Value
		if field != "" {
			sub = field + "." + k.Value
		}
		if err := fn(k.Value, n.Content[i+1], sub); err != nil {
			return err
		}
	}
	return nil
}

// each calls fn for each item of a sequence node; null is an empty list.
func (p *kcParser) each(n *yaml.Node, field string, fn func(item *yaml.Node, field string) error) error {
	if isNull(n) {
		return nil
	}
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, field, fmt.Errorf("want a list, got %s", kindName(n)))
	}
	for i, item := range n.Content {
		if err := fn(item, fmt.Sprintf("%s[%d]", field, i)); err != nil {
			return err
		}
	}
	return nil
}

func (p *kcParser) str(n *yaml.Node, field string) (string, error) {
	if isNull(n) {
		return "", nil
	}
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		return "", p.fail(n, field, fmt.Errorf("want a string, got %s", kindName(n)))
	}
	return n.Value, nil
}

func (p *kcParser) strs(n *yaml.Node, field string) ([]string, error) {
	var out []string
	err := p.each(n, field, func(item *yaml.Node, field string) error {
		s, err := p.str(item, field)
		out = append(out, s)
		return err
	})
	return out, err
}

func (p *kcParser) boolean(n *yaml.Node, field string) (bool, error) {
	s, err := p.str(n, field)
	if err != nil {
		return false, err
	}
	// kubectl reads kubeconfig as YAML 1.1, where yes/no and on/off are
	// booleans too.
	switch strings.ToLower(s) {
	case "", "false", "no", "off":
		return false, nil
	case "true", "yes", "on":
		return true, nil
	}
	return false, p.fail(n, field, fmt.Errorf("want true or false, got %q", s))
}

// data decodes a base64 "-data" field. The decoder's errors give an offset,
// never the input.
func (p *kcParser) data(n *yaml.Node, field string) ([]byte, error) {
	s, err := p.str(n, field)
	if err != nil || s == "" {
		return nil, err
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, p.fail(n, field, fmt.Errorf("not valid base64: %w", err))
	}
	return b, nil
}

// path reads a file path, resolving a relative one against the folder of
// the kubeconfig that names it.
func (p *kcParser) path(n *yaml.Node, field string) (string, error) {
	s, err := p.str(n, field)
	return p.resolve(s), err
}

func (p *kcParser) resolve(s string) string {
	if s == "" || filepath.IsAbs(s) {
		return s
	}
	return filepath.Join(p.dir, s)
}
