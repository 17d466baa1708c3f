package httpwatch

import (
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
)

// A Config is logged and printed often ("connecting with %+v"), so every
// fmt verb goes through these methods, which replace secrets with
// "<redacted>" and large byte fields with their length.

const redacted = "<redacted>"

// String describes c with secrets redacted, in the style of %+v.
func (c Config) String() string { return c.describe(false) }

// GoString describes c with secrets redacted, in the style of %#v.
func (c Config) GoString() string { return c.describe(true) }

// Format makes every fmt verb print the redacted description.
func (c Config) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

func (c Config) describe(goSyntax bool) string {
	d := describer{goSyntax: goSyntax}
	d.str("Host", redactURL(c.Host))
	d.str("Namespace", c.Namespace)
	d.secret("BearerToken", c.BearerToken != "")
	d.str("BearerTokenFile", c.BearerTokenFile)
	d.str("Username", c.Username)
	d.secret("Password", c.Password != "")
	if c.Exec != nil {
		d.add("Exec", c.Exec.String(), "&"+c.Exec.GoString())
	}
	d.bytes("CAData", c.CAData)
	d.str("CAFile", c.CAFile)
	d.bytes("CertData", c.CertData)
	if len(c.KeyData) > 0 {
		d.add("KeyData", redacted, `[]byte("`+redacted+`")`)
	}
	d.str("CertFile", c.CertFile)
	d.str("KeyFile", c.KeyFile)
	d.str("ServerName", c.ServerName)
	if c.Insecure {
		d.add("Insecure", "true", "true")
	}
	d.str("ProxyURL", redactURL(c.ProxyURL))
	d.str("UserAgent", c.UserAgent)
	if !c.Impersonate.isZero() {
		d.add("Impersonate", fmt.Sprintf("%+v", c.Impersonate), fmt.Sprintf("%#v", c.Impersonate))
	}
	if c.QPS != 0 {
		d.add("QPS", fmt.Sprint(c.QPS), fmt.Sprintf("%#v", c.QPS))
	}
	if c.Burst != 0 {
		d.add("Burst", fmt.Sprint(c.Burst), fmt.Sprint(c.Burst))
	}
	if c.Timeout != 0 {
		d.add("Timeout", c.Timeout.String(), fmt.Sprintf("%d", c.Timeout))
	}
	if c.Transport != nil {
		d.add("Transport", fmt.Sprintf("%T", c.Transport), fmt.Sprintf("%T", c.Transport))
	}
	if c.Clock != nil {
		d.add("Clock", fmt.Sprintf("%T", c.Clock), fmt.Sprintf("%T", c.Clock))
	}
	return d.finish("httpwatch.Config")
}

// String describes e with environment values redacted.
func (e ExecConfig) String() string { return e.describe(false) }

// GoString describes e with environment values redacted.
func (e ExecConfig) GoString() string { return e.describe(true) }

// Format makes every fmt verb print the redacted description.
func (e ExecConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, e) }

func (e ExecConfig) describe(goSyntax bool) string {
	d := describer{goSyntax: goSyntax}
	d.str("Command", e.Command)
	if len(e.Args) > 0 {
		d.add("Args", fmt.Sprintf("%q", e.Args), fmt.Sprintf("%#v", e.Args))
	}
	if len(e.Env) > 0 {
		plain, gos := make([]string, len(e.Env)), make([]string, len(e.Env))
		for i, v := range e.Env {
			plain[i], gos[i] = v.String(), v.GoString()
		}
		d.add("Env", "["+strings.Join(plain, " ")+"]", "[]httpwatch.ExecEnvVar{"+strings.Join(gos, ", ")+"}")
	}
	d.str("APIVersion", e.APIVersion)
	d.str("InstallHint", e.InstallHint)
	if e.ProvideClusterInfo {
		d.add("ProvideClusterInfo", "true", "true")
	}
	d.str("InteractiveMode", e.InteractiveMode)
	d.bytes("ClusterConfig", e.ClusterConfig)
	return d.finish("httpwatch.ExecConfig")
}

// String shows the variable's name only.
func (v ExecEnvVar) String() string { return "{Name:" + v.Name + " Value:" + redacted + "}" }

// GoString shows the variable's name only.
func (v ExecEnvVar) GoString() string {
	return "httpwatch.ExecEnvVar{Name:" + strconv.Quote(v.Name) + `, Value:"` + redacted + `"}`
}

// Format makes every fmt verb print the redacted description.
func (v ExecEnvVar) Format(f fmt.State, verb rune) { formatRedacted(f, verb, v) }

type redactable interface {
	String() string
	GoString() string
}

func formatRedacted(f fmt.State, verb rune, r redactable) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, r.GoString())
	case verb == 'v' || verb == 's':
		io.WriteString(f, r.String())
	case verb == 'q':
		io.WriteString(f, strconv.Quote(r.String()))
	default:
		fmt.Fprintf(f, "%%!%c(%s)", verb, r.String())
	}
}

// describer writes the set fields of a struct in %+v or %#v style.
type describer struct {
	goSyntax bool
	fields   []string
}

func (d *describer) add(name, plain, goSyntax string) {
	if d.goSyntax {
		d.fields = append(d.fields, name+":"+goSyntax)
	} else {
		d.fields = append(d.fields, name+":"+plain)
	}
}

func (d *describer) str(name, v string) {
	if v != "" {
		d.add(name, v, strconv.Quote(v))
	}
}

func (d *describer) secret(name string, set bool) {
	if set {
		d.add(name, redacted, strconv.Quote(redacted))
	}
}

func (d *describer) bytes(name string, b []byte) {
	if len(b) > 0 {
		d.add(name, fmt.Sprintf("<%d bytes>", len(b)), fmt.Sprintf("[]byte{/* %d bytes */}", len(b)))
	}
}

func (d *describer) finish(typeName string) string {
	if d.goSyntax {
		return typeName + "{" + strings.Join(d.fields, ", ") + "}"
	}
	return "{" + strings.Join(d.fields, " ") + "}"
}

// redactURL hides a password in a URL's user info.
func redactURL(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil {
		return "<unparsable URL>"
	}
	return u.Redacted()
}
