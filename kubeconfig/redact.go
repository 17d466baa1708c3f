package kubeconfig

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/listwatch/listwatch/internal/redact"
)

// A Config is logged and printed often ("connecting with %+v", slog.Any,
// json.Marshal), so every encoding goes through these methods, which
// replace secrets with "<redacted>" and large byte fields with their
// length. Each type lists its set fields once (fields) and every encoding
// renders that list.

const redacted = redact.Mark

// String describes c with secrets redacted, in the style of %+v.
func (c Config) String() string { return plainText(c.fields()) }

// GoString describes c with secrets redacted, in the style of %#v.
func (c Config) GoString() string { return goText("kubeconfig.Config", c.fields()) }

// Format makes every fmt verb print the redacted description.
func (c Config) Format(f fmt.State, verb rune) { formatRedacted(f, verb, c) }

// MarshalJSON encodes the set fields of c with secrets redacted. It is for
// logs; the result does not decode back into a usable Config.
func (c Config) MarshalJSON() ([]byte, error) { return marshalFields(c.fields()) }

// LogValue makes slog log the set fields of c with secrets redacted.
func (c Config) LogValue() slog.Value { return logValue(c.fields()) }

func (c Config) fields() []field {
	var d describer
	d.str("Host", redact.URL(c.Host))
	d.str("Namespace", c.Namespace)
	d.secret("BearerToken", c.BearerToken != "")
	d.str("BearerTokenFile", c.BearerTokenFile)
	d.str("Username", c.Username)
	d.secret("Password", c.Password != "")
	if c.Exec != nil {
		d.add("Exec", c.Exec.String(), "&"+c.Exec.GoString(), *c.Exec)
	}
	d.bytes("CAData", c.CAData)
	d.str("CAFile", c.CAFile)
	d.bytes("CertData", c.CertData)
	if len(c.KeyData) > 0 {
		d.add("KeyData", redacted, `[]byte("`+redacted+`")`, redacted)
	}
	d.str("CertFile", c.CertFile)
	d.str("KeyFile", c.KeyFile)
	d.str("ServerName", c.ServerName)
	if c.Insecure {
		d.add("Insecure", "true", "true", true)
	}
	d.str("ProxyURL", redact.URL(c.ProxyURL))
	d.str("UserAgent", c.UserAgent)
	if !c.Impersonate.isZero() {
		d.add("Impersonate", fmt.Sprintf("%+v", c.Impersonate), fmt.Sprintf("%#v", c.Impersonate), c.Impersonate)
	}
	if c.QPS != 0 {
		d.add("QPS", fmt.Sprint(c.QPS), fmt.Sprintf("%#v", c.QPS), c.QPS)
	}
	if c.Burst != 0 {
		d.add("Burst", fmt.Sprint(c.Burst), fmt.Sprint(c.Burst), c.Burst)
	}
	for _, f := range []struct {
		name string
		d    time.Duration
	}{{"Timeout", c.Timeout}, {"PingAfter", c.PingAfter}, {"PingTimeout", c.PingTimeout}, {"KeepAlive", c.KeepAlive}} {
		if f.d != 0 {
			d.add(f.name, f.d.String(), fmt.Sprintf("%d", f.d), f.d.String())
		}
	}
	if c.Transport != nil {
		d.typeName("Transport", c.Transport)
	}
	if c.WrapTransport != nil {
		d.add("WrapTransport", "set", `"set"`, "set")
	}
	if c.Clock != nil {
		d.typeName("Clock", c.Clock)
	}
	return d.fields
}

// String describes e with environment values redacted.
func (e ExecConfig) String() string { return plainText(e.fields()) }

// GoString describes e with environment values redacted.
func (e ExecConfig) GoString() string { return goText("kubeconfig.ExecConfig", e.fields()) }

// Format makes every fmt verb print the redacted description.
func (e ExecConfig) Format(f fmt.State, verb rune) { formatRedacted(f, verb, e) }

// MarshalJSON encodes the set fields of e with environment values redacted.
func (e ExecConfig) MarshalJSON() ([]byte, error) { return marshalFields(e.fields()) }

// LogValue makes slog log the set fields of e with environment values
// redacted.
func (e ExecConfig) LogValue() slog.Value { return logValue(e.fields()) }

func (e ExecConfig) fields() []field {
	var d describer
	d.str("Command", e.Command)
	if len(e.Args) > 0 {
		d.add("Args", fmt.Sprintf("%q", e.Args), fmt.Sprintf("%#v", e.Args), e.Args)
	}
	if len(e.Env) > 0 {
		plain, gos := make([]string, len(e.Env)), make([]string, len(e.Env))
		for i, v := range e.Env {
			plain[i], gos[i] = v.String(), v.GoString()
		}
		d.add("Env", "["+strings.Join(plain, " ")+"]", "[]kubeconfig.ExecEnvVar{"+strings.Join(gos, ", ")+"}", envList(e.Env))
	}
	d.str("APIVersion", e.APIVersion)
	d.str("InstallHint", e.InstallHint)
	if e.ProvideClusterInfo {
		d.add("ProvideClusterInfo", "true", "true", true)
	}
	d.str("InteractiveMode", e.InteractiveMode)
	d.bytes("ClusterConfig", e.ClusterConfig)
	return d.fields
}

// String shows the variable's name only.
func (v ExecEnvVar) String() string { return "{Name:" + v.Name + " Value:" + redacted + "}" }

// GoString shows the variable's name only.
func (v ExecEnvVar) GoString() string {
	return "kubeconfig.ExecEnvVar{Name:" + strconv.Quote(v.Name) + `, Value:"` + redacted + `"}`
}

// Format makes every fmt verb print the redacted description.
func (v ExecEnvVar) Format(f fmt.State, verb rune) { formatRedacted(f, verb, v) }

// MarshalJSON encodes the variable's name only.
func (v ExecEnvVar) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct{ Name, Value string }{v.Name, redacted})
}

// LogValue makes slog log the variable's name only.
func (v ExecEnvVar) LogValue() slog.Value {
	return slog.GroupValue(slog.String("Name", v.Name), slog.String("Value", redacted))
}

// envList logs as a group keyed by variable name, which reads better than
// a list of groups; in JSON it is the list of redacted variables.
type envList []ExecEnvVar

func (l envList) LogValue() slog.Value {
	attrs := make([]slog.Attr, len(l))
	for i, v := range l {
		attrs[i] = slog.String(v.Name, redacted)
	}
	return slog.GroupValue(attrs...)
}

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

// field is one set field of a struct, already redacted, as %+v and %#v
// print it and as JSON and slog encode it (value).
type field struct {
	name, plain, goSyntax string
	value                 any
}

// describer collects the set fields of a struct.
type describer struct {
	fields []field
}

func (d *describer) add(name, plain, goSyntax string, value any) {
	d.fields = append(d.fields, field{name, plain, goSyntax, value})
}

func (d *describer) str(name, v string) {
	if v != "" {
		d.add(name, v, strconv.Quote(v), v)
	}
}

func (d *describer) secret(name string, set bool) {
	if set {
		d.add(name, redacted, strconv.Quote(redacted), redacted)
	}
}

func (d *describer) bytes(name string, b []byte) {
	if len(b) > 0 {
		n := fmt.Sprintf("<%d bytes>", len(b))
		d.add(name, n, fmt.Sprintf("[]byte{/* %d bytes */}", len(b)), n)
	}
}

// typeName describes an interface field (a transport, a clock) by its type.
func (d *describer) typeName(name string, v any) {
	t := fmt.Sprintf("%T", v)
	d.add(name, t, t, t)
}

func plainText(fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name + ":" + f.plain
	}
	return "{" + strings.Join(parts, " ") + "}"
}

func goText(typeName string, fs []field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.name + ":" + f.goSyntax
	}
	return typeName + "{" + strings.Join(parts, ", ") + "}"
}

// marshalFields encodes fields as a JSON object, in order.
func marshalFields(fs []field) ([]byte, error) {
	b := []byte{'{'}
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, f.name)
		v, err := json.Marshal(f.value)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", f.name, err)
		}
		b = append(b, ':')
		b = append(b, v...)
	}
	return append(b, '}'), nil
}

func logValue(fs []field) slog.Value {
	attrs := make([]slog.Attr, len(fs))
	for i, f := range fs {
		attrs[i] = slog.Any(f.name, f.value)
	}
	return slog.GroupValue(attrs...)
}
