package kubeconfig

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/require"
)

func TestRate(t *testing.T) {
	tests := []struct {
		qps       float64
		burst     int
		wantQPS   float64
		wantBurst int
	}{
		{0, 0, DefaultQPS, DefaultBurst},
		{20, 0, 20, DefaultBurst},
		{0, 7, DefaultQPS, 7},
		{500, 1000, 500, 1000},
		{-1, 0, math.Inf(1), 0},
		{-1, 50, math.Inf(1), 0},
	}
	for _, tt := range tests {
		c := Config{QPS: tt.qps, Burst: tt.burst}
		qps, burst := c.Rate()
		require.Equal(t, tt.wantQPS, qps, "QPS %v Burst %v", tt.qps, tt.burst)
		require.Equal(t, tt.wantBurst, burst, "QPS %v Burst %v", tt.qps, tt.burst)
	}
}

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no host", Config{}, `Host "": want an http:// or https:// URL with a host`},
		{"no scheme", Config{Host: "10.0.0.1:6443"}, "want an http:// or https:// URL"},
		{"ftp", Config{Host: "ftp://h"}, "want an http:// or https:// URL"},
		{"password in host is hidden", Config{Host: "ftp://u:hunter2@h"}, `Host "ftp://u:xxxxx@h"`},
		{"token and file", Config{Host: "https://h", BearerToken: "a", BearerTokenFile: "/f"}, "set only one of BearerToken, BearerTokenFile, Username/Password and Exec"},
		{"token and basic", Config{Host: "https://h", BearerToken: "a", Username: "u"}, "set only one of"},
		{"CA twice", Config{Host: "https://h", CAData: []byte("x"), CAFile: "/f"}, "set CAData or CAFile, not both"},
		{"cert twice", Config{Host: "https://h", CertData: []byte("x"), CertFile: "/f", KeyData: []byte("k")}, "set CertData or CertFile, not both"},
		{"key twice", Config{Host: "https://h", CertData: []byte("x"), KeyData: []byte("k"), KeyFile: "/f"}, "set KeyData or KeyFile, not both"},
		{"key without cert", Config{Host: "https://h", KeyData: []byte("k")}, "needs both a certificate"},
		{"insecure with CA", Config{Host: "https://h", Insecure: true, CAData: []byte("x")}, "Insecure cannot be combined with CAData or CAFile"},
		{"transport with TLS", Config{Host: "https://h", Transport: http.DefaultTransport, CAData: []byte("x")}, "Transport is set, so the TLS and proxy fields would be ignored"},
		{"transport with proxy", Config{Host: "https://h", Transport: http.DefaultTransport, ProxyURL: "http://p:1"}, "Transport is set"},
		{"groups without user", Config{Host: "https://h", Impersonate: Impersonation{Groups: []string{"g"}}}, "Impersonate needs User"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.cfg.RoundTripper()
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "hunter2")
		})
	}
}

func TestCustomTransportKeepsCredentials(t *testing.T) {
	valid := "tok"
	srv, _ := tokenServer(t, &valid)
	// The server's own client transport, as a test against httptest would use.
	s, code, err := get(t, &Config{Host: srv.URL, BearerToken: "tok", Transport: srv.Client().Transport})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer tok", s.Authorization)
}

// secretConfig sets every secret field to a value that contains "hunter2".
func secretConfig() Config {
	return Config{
		Host:        "https://admin:hunter2-host@10.0.0.1:6443",
		Namespace:   "ns",
		BearerToken: "hunter2-token",
		Username:    "admin",
		Password:    "hunter2-password",
		CAData:      []byte("-----BEGIN CERTIFICATE-----"),
		CertData:    []byte("-----BEGIN CERTIFICATE-----"),
		KeyData:     []byte("-----BEGIN EC PRIVATE KEY----- hunter2-key"),
		ProxyURL:    "http://proxyuser:hunter2-proxy@proxy:3128",
		Exec: &ExecConfig{Command: "aws", Args: []string{"eks", "get-token"}, APIVersion: ExecAPIVersionV1,
			Env: []ExecEnvVar{{"AWS_SECRET_ACCESS_KEY", "hunter2-env"}}},
		Impersonate: Impersonation{User: "jane"},
		QPS:         100,
		Timeout:     30 * time.Second,
		Transport:   http.DefaultTransport,
		Clock:       clock.Real,
	}
}

func TestConfigRedaction(t *testing.T) {
	c := secretConfig()
	type wrapper struct {
		Name string
		Cfg  Config
		Ptr  *Config
	}
	outputs := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		outputs[verb+" value"] = fmt.Sprintf(verb, c)
		outputs[verb+" pointer"] = fmt.Sprintf(verb, &c)
		outputs[verb+" exec"] = fmt.Sprintf(verb, c.Exec)
		outputs[verb+" env"] = fmt.Sprintf(verb, c.Exec.Env)
	}
	outputs["nested %+v"] = fmt.Sprintf("%+v", wrapper{"x", c, &c})
	outputs["nested %#v"] = fmt.Sprintf("%#v", wrapper{"x", c, &c})
	outputs["String"] = c.String()
	outputs["GoString"] = c.GoString()
	outputs["error"] = fmt.Errorf("connect with %v: %w", c, errors.New("boom")).Error()
	for name, out := range outputs {
		require.NotContains(t, out, "hunter2", name)
	}
	require.Equal(t, `{Host:https://admin:xxxxx@10.0.0.1:6443 Namespace:ns BearerToken:<redacted> Username:admin Password:<redacted> `+
		`Exec:{Command:aws Args:["eks" "get-token"] Env:[{Name:AWS_SECRET_ACCESS_KEY Value:<redacted>}] APIVersion:client.authentication.k8s.io/v1} `+
		`CAData:<27 bytes> CertData:<27 bytes> KeyData:<redacted> ProxyURL:http://proxyuser:xxxxx@proxy:3128 `+
		`Impersonate:{User:jane UID: Groups:[] Extra:map[]} QPS:100 Timeout:30s Transport:*http.Transport Clock:clock.realClock}`,
		fmt.Sprintf("%+v", c))
	require.Equal(t, `kubeconfig.Config{Host:"https://admin:xxxxx@10.0.0.1:6443", Namespace:"ns", BearerToken:"<redacted>", Username:"admin", Password:"<redacted>", `+
		`Exec:&kubeconfig.ExecConfig{Command:"aws", Args:[]string{"eks", "get-token"}, Env:[]kubeconfig.ExecEnvVar{kubeconfig.ExecEnvVar{Name:"AWS_SECRET_ACCESS_KEY", Value:"<redacted>"}}, APIVersion:"client.authentication.k8s.io/v1"}, `+
		`CAData:[]byte{/* 27 bytes */}, CertData:[]byte{/* 27 bytes */}, KeyData:[]byte("<redacted>"), ProxyURL:"http://proxyuser:xxxxx@proxy:3128", `+
		`Impersonate:kubeconfig.Impersonation{User:"jane", UID:"", Groups:[]string(nil), Extra:map[string][]string(nil)}, QPS:100, Timeout:30000000000, Transport:*http.Transport, Clock:clock.realClock}`,
		fmt.Sprintf("%#v", c))
	require.Equal(t, "{}", fmt.Sprint(Config{}))
	require.True(t, strings.HasPrefix(fmt.Sprintf("%d", c), "%!d({Host:"))
}

func TestTransportRedaction(t *testing.T) {
	c := secretConfig()
	c.Exec, c.Password, c.Username, c.Transport, c.ProxyURL, c.CAData, c.CertData, c.KeyData = nil, "", "", nil, "", nil, nil, nil
	c.Host = "https://10.0.0.1:6443"
	rt, err := c.RoundTripper()
	require.NoError(t, err)
	for _, verb := range []string{"%v", "%+v", "%#v"} {
		require.NotContains(t, fmt.Sprintf(verb, rt), "hunter2")
		require.NotContains(t, fmt.Sprintf(verb, &http.Client{Transport: rt}), "hunter2")
	}
}
