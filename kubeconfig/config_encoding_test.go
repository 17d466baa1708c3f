package kubeconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every way a program might print or log a Config hides its secrets:
// fmt verbs, json.Marshal, slog's JSON and text
// handlers, directly and nested.
func TestConfigEncodingsRedact(t *testing.T) {
	c := secretConfig()
	type wrapper struct {
		Name string
		Cfg  Config
		Ptr  *Config
		Exec ExecConfig
		Env  []ExecEnvVar
	}
	values := map[string]any{
		"value":   c,
		"pointer": &c,
		"exec":    c.Exec,
		"env":     c.Exec.Env,
		"env var": c.Exec.Env[0],
		"nested":  wrapper{"x", c, &c, *c.Exec, c.Exec.Env},
	}
	for name, v := range values {
		outputs := map[string]string{}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
			outputs[verb] = fmt.Sprintf(verb, v)
		}
		b, err := json.Marshal(v)
		require.NoError(t, err, name)
		outputs["json"] = string(b)
		b, err = json.MarshalIndent(v, "", "  ")
		require.NoError(t, err, name)
		outputs["json indent"] = string(b)
		for handler, newHandler := range map[string]func(*bytes.Buffer) slog.Handler{
			"slog json": func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			"slog text": func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		} {
			var buf bytes.Buffer
			l := slog.New(newHandler(&buf))
			l.Info("connecting", "cfg", v)
			l.Info("connecting", slog.Any("cfg", v))
			l.With("cfg", v).Info("connecting")
			l.WithGroup("g").Info("connecting", "cfg", v)
			outputs[handler] = buf.String()
		}
		for enc, out := range outputs {
			require.NotContains(t, out, "hunter2", "%s as %s:\n%s", name, enc, out)
		}
	}
}

// The redacted encodings still say what is configured.
func TestConfigJSONAndLogShape(t *testing.T) {
	c := secretConfig()
	b, err := json.Marshal(c)
	require.NoError(t, err)
	require.JSONEq(t, `{
		"Host": "https://admin:xxxxx@10.0.0.1:6443", "Namespace": "ns",
		"BearerToken": "<redacted>", "Username": "admin", "Password": "<redacted>",
		"Exec": {"Command": "aws", "Args": ["eks", "get-token"],
			"Env": [{"Name": "AWS_SECRET_ACCESS_KEY", "Value": "<redacted>"}],
			"APIVersion": "client.authentication.k8s.io/v1"},
		"CAData": "<27 bytes>", "CertData": "<27 bytes>", "KeyData": "<redacted>",
		"ProxyURL": "http://proxyuser:xxxxx@proxy:3128",
		"Impersonate": {"User": "jane", "UID": "", "Groups": null, "Extra": null},
		"QPS": 100, "Timeout": "30s", "Transport": "*http.Transport", "Clock": "clock.realClock"}`, string(b))
	b, err = json.Marshal(Config{})
	require.NoError(t, err)
	require.Equal(t, "{}", string(b))

	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: dropTime})).Info("x", "cfg", c)
	require.Equal(t, `level=INFO msg=x cfg.Host=https://admin:xxxxx@10.0.0.1:6443 cfg.Namespace=ns cfg.BearerToken=<redacted> `+
		`cfg.Username=admin cfg.Password=<redacted> cfg.Exec.Command=aws cfg.Exec.Args="[eks get-token]" `+
		`cfg.Exec.Env.AWS_SECRET_ACCESS_KEY=<redacted> cfg.Exec.APIVersion=client.authentication.k8s.io/v1 `+
		`cfg.CAData="<27 bytes>" cfg.CertData="<27 bytes>" cfg.KeyData=<redacted> cfg.ProxyURL=http://proxyuser:xxxxx@proxy:3128 `+
		`cfg.Impersonate="{User:jane UID: Groups:[] Extra:map[]}" cfg.QPS=100 cfg.Timeout=30s cfg.Transport=*http.Transport cfg.Clock=clock.realClock`+"\n",
		buf.String())
}

func dropTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}
