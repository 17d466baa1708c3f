package kubeconfig

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTLSServerVerification(t *testing.T) {
	ca := newTestCA(t, "cluster-ca")
	other := newTestCA(t, "some-other-ca")
	srv := newTLSServer(t, ca, false, http.HandlerFunc(echo))
	dir := t.TempDir()
	caFile := writeFile(t, dir, "ca.crt", ca.pem)

	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // substrings; nil means the request succeeds
	}{
		{name: "CAData", cfg: Config{CAData: ca.pem}},
		{name: "CAFile", cfg: Config{CAFile: caFile}},
		{name: "Insecure", cfg: Config{Insecure: true}},
		{name: "ServerName the certificate carries", cfg: Config{CAData: ca.pem, ServerName: "kubernetes.test"}},
		{name: "wrong CA", cfg: Config{CAData: other.pem},
			wantErr: []string{"verify the certificate of " + strings.TrimPrefix(srv.URL, "https://"), "against CAData", "not signed by that CA", "x509"}},
		{name: "wrong CA file", cfg: Config{CAFile: writeFile(t, dir, "other.crt", other.pem)},
			wantErr: []string{"against CAFile " + dir, "not signed by that CA"}},
		{name: "system roots", cfg: Config{},
			wantErr: []string{"against the system roots (no CAData or CAFile set)", "x509"}},
		{name: "ServerName the certificate lacks", cfg: Config{CAData: ca.pem, ServerName: "other.test"},
			wantErr: []string{"set ServerName", "other.test"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Host = srv.URL
			s, code, err := get(t, &tt.cfg)
			if tt.wantErr == nil {
				require.NoError(t, err)
				require.Equal(t, http.StatusOK, code)
				require.Equal(t, "/api/v1/namespaces", s.Path)
				return
			}
			require.Error(t, err)
			var verr *tls.CertificateVerificationError
			require.True(t, errors.As(err, &verr), "errors.As(*tls.CertificateVerificationError): %v", err)
			for _, w := range tt.wantErr {
				require.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestTLSClientCertificate(t *testing.T) {
	ca := newTestCA(t, "cluster-ca")
	srv := newTLSServer(t, ca, true, http.HandlerFunc(echo))
	certPEM, keyPEM := ca.issue(t, "alice", false)
	dir := t.TempDir()
	certFile, keyFile := writeFile(t, dir, "alice.crt", certPEM), writeFile(t, dir, "alice.key", keyPEM)

	for name, cfg := range map[string]Config{
		"data":  {CertData: certPEM, KeyData: keyPEM},
		"files": {CertFile: certFile, KeyFile: keyFile},
		"mixed": {CertFile: certFile, KeyData: keyPEM},
	} {
		t.Run(name, func(t *testing.T) {
			cfg.Host, cfg.CAData = srv.URL, ca.pem
			s, code, err := get(t, &cfg)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, code)
			require.Equal(t, "alice", s.ClientCN)
		})
	}

	t.Run("none", func(t *testing.T) {
		_, _, err := get(t, &Config{Host: srv.URL, CAData: ca.pem})
		require.Error(t, err, "the server requires a client certificate")
	})
}

func TestTLSConfigErrors(t *testing.T) {
	ca := newTestCA(t, "ca")
	certPEM, keyPEM := ca.issue(t, "alice", false)
	_, otherKey := ca.issue(t, "bob", false)
	dir := t.TempDir()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"CA file missing", Config{CAFile: dir + "/nope.crt"}, "read CAFile: open " + dir + "/nope.crt"},
		{"CA not PEM", Config{CAData: []byte("hello")}, "CAData holds no PEM certificate"},
		{"CA file not PEM", Config{CAFile: writeFile(t, dir, "bad.crt", []byte("x"))}, "CAFile " + dir + "/bad.crt holds no PEM certificate"},
		{"cert file missing", Config{CertFile: dir + "/c", KeyData: keyPEM}, "read CertFile: open " + dir + "/c"},
		{"key file missing", Config{CertData: certPEM, KeyFile: dir + "/k"}, "read KeyFile: open " + dir + "/k"},
		{"key does not match", Config{CertData: certPEM, KeyData: otherKey}, "load client certificate (CertData, KeyData): tls: private key does not match public key"},
		{"proxy scheme", Config{ProxyURL: "ftp://proxy:21"}, "scheme must be http, https, socks5 or socks5h"},
		{"proxy not a URL", Config{ProxyURL: "proxy"}, `ProxyURL "proxy" is not a URL with a host`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Host = "https://127.0.0.1:1"
			_, err := tt.cfg.RoundTripper()
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "PRIVATE KEY")
		})
	}
}

func TestProxyURL(t *testing.T) {
	var target string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target = r.URL.String() // a proxy is sent the absolute URL
		echo(w, r)
	}))
	defer proxy.Close()
	_, code, err := get(t, &Config{Host: "http://apiserver.invalid:8080", ProxyURL: proxy.URL, BearerToken: "t"})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	u, err := url.Parse(target)
	require.NoError(t, err)
	require.Equal(t, "apiserver.invalid:8080", u.Host)
}
