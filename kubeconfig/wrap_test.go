package kubeconfig

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingTransport is a WrapTransport that remembers what it saw.
type recordingTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	auth  []string
	codes []int
}

func (r *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.auth = append(r.auth, req.Header.Get("Authorization"))
	if err == nil {
		r.codes = append(r.codes, resp.StatusCode)
	}
	return resp, err
}

// WrapTransport sees every request and its response, while TLS (a client
// certificate, the server's CA) and the bearer token configured still
// apply underneath it; it never sees the credential.
func TestWrapTransportKeepsTLSAndCredentials(t *testing.T) {
	ca := newTestCA(t, "ca")
	srv := newTLSServer(t, ca, true, http.HandlerFunc(echo))
	certPEM, keyPEM := ca.issue(t, "alice", false)
	var rec *recordingTransport
	cfg := &Config{
		Host: srv.URL, CAData: ca.pem, CertData: certPEM, KeyData: keyPEM, BearerToken: "hunter2",
		WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
			rec = &recordingTransport{next: rt}
			return rec
		},
	}
	got, code, err := get(t, cfg)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Bearer hunter2", got.Authorization, "the server got the token")
	assert.Equal(t, "alice", got.ClientCN, "and the client certificate")
	require.NotNil(t, rec)
	assert.Equal(t, []string{""}, rec.auth, "the wrapper never sees the credential")
	assert.Equal(t, []int{http.StatusOK}, rec.codes)
	assert.NotContains(t, cfg.String(), "hunter2")
	assert.Contains(t, cfg.String(), "WrapTransport:set")
}

func TestWrapTransportReturningNilIsAnError(t *testing.T) {
	cfg := &Config{Host: "https://example.invalid", WrapTransport: func(http.RoundTripper) http.RoundTripper { return nil }}
	_, err := cfg.RoundTripper()
	require.Error(t, err)
	assert.ErrorContains(t, err, "WrapTransport")
}
