package httpwatch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/kubeconfig"
)

// A server certificate that does not verify will not verify on the next
// try either: an unknown authority, a name the certificate lacks and an
// expired certificate are permanent, however they are wrapped.
func TestCertificateFailuresArePermanent(t *testing.T) {
	wrap := func(err error) error {
		return fmt.Errorf("GET /api/v1/pods: %w", &url.Error{Op: "Get", URL: "https://k", Err: fmt.Errorf("verify the certificate: %w",
			&tls.CertificateVerificationError{Err: err})})
	}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"unknown authority", wrap(x509.UnknownAuthorityError{}), true},
		{"name mismatch", wrap(x509.HostnameError{Host: "other.test", Certificate: &x509.Certificate{}}), true},
		{"expired", wrap(x509.CertificateInvalidError{Reason: x509.Expired, Cert: &x509.Certificate{}}), true},
		{"x509 alone", fmt.Errorf("verify: %w", x509.UnknownAuthorityError{}), true},
		{"timeout", &url.Error{Op: "Get", URL: "https://k", Err: &net.OpError{Op: "dial", Err: context.DeadlineExceeded}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, IsPermanent(tc.err))
		})
	}
}

// A list from a server whose certificate the client does not trust fails
// after one attempt, not after RetryMax more, with an error IsPermanent
// accepts.
func TestWrongCAIsNotRetried(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`{"kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.StartTLS()
	defer srv.Close()
	other := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: selfSigned(t)})
	for _, tc := range []struct {
		name string
		cfg  kubeconfig.Config
	}{
		{"wrong CA", kubeconfig.Config{CAData: other}},
		{"system roots", kubeconfig.Config{}},
		{"name the certificate lacks", kubeconfig.Config{CAData: certPEM(srv), ServerName: "other.test"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conns.Store(0)
			tc.cfg.Host, tc.cfg.QPS = srv.URL, -1
			c, err := NewClient(&tc.cfg)
			require.NoError(t, err)
			defer c.CloseIdleConnections()
			c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, time.Millisecond
			_, err = c.Resource(Resource{Version: "v1", Resource: "pods"}).List(context.Background(), ListOptions{})
			require.Error(t, err)
			assert.True(t, IsPermanent(err), "%v", err)
			var verr *tls.CertificateVerificationError
			assert.True(t, errors.As(err, &verr), "%v", err)
			assert.EqualValues(t, 1, conns.Load(), "one attempt, no retry")
		})
	}
}

func certPEM(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

// selfSigned returns a CA certificate (DER) that signed nothing of srv's.
func selfSigned(t *testing.T) []byte {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "some-other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return der
}
