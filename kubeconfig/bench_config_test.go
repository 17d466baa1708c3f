package kubeconfig

import (
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// okTransport answers every request at once, so a benchmark measures only
// what the Config's round tripper adds.
type okTransport struct{}

func (okTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
}

func benchmarkRoundTrip(b *testing.B, cfg *Config) {
	cfg.Host, cfg.Transport = "https://10.0.0.1:6443", okTransport{}
	rt, err := cfg.RoundTripper()
	if err != nil {
		b.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/api/v1/pods?limit=500", nil)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
	}
}

func BenchmarkRoundTripBearer(b *testing.B) {
	benchmarkRoundTrip(b, &Config{BearerToken: "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.payload.signature"})
}

func BenchmarkRoundTripTokenFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "token")
	writeFileB(b, path, "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9.payload.signature")
	benchmarkRoundTrip(b, &Config{BearerTokenFile: path})
}

func BenchmarkRoundTripImpersonate(b *testing.B) {
	benchmarkRoundTrip(b, &Config{BearerToken: "t", Impersonate: Impersonation{User: "jane", Groups: []string{"dev", "ops"}}})
}

func BenchmarkParseKubeconfig(b *testing.B) {
	// 20 clusters, users and contexts, as a platform team's merged file has.
	var clusters, users, contexts strings.Builder
	for i := range 20 {
		fmt.Fprintf(&clusters, "- name: c%d\n  cluster:\n    server: https://10.0.0.%d:6443\n    certificate-authority-data: %s\n", i, i, b64(strings.Repeat("CA PEM ", 100)))
		fmt.Fprintf(&users, "- name: u%d\n  user:\n    client-certificate-data: %s\n    client-key-data: %s\n", i, b64(strings.Repeat("CERT ", 100)), b64(strings.Repeat("KEY ", 50)))
		fmt.Fprintf(&contexts, "- name: x%d\n  context: {cluster: c%d, user: u%d, namespace: team-%d}\n", i, i, i, i)
	}
	data := []byte("apiVersion: v1\nkind: Config\ncurrent-context: x0\nclusters:\n" + clusters.String() + "users:\n" + users.String() + "contexts:\n" + contexts.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		kc, err := parseKubeconfig("/tmp/config", data)
		if err != nil || len(kc.contexts) != 20 {
			b.Fatal(err)
		}
	}
}
