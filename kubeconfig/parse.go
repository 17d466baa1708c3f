package kubeconfig

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
	if err := checkAliasing(&doc); err != nil {
		return nil, &Error{File: abs, Err: err}
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
