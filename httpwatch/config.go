package httpwatch

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"time"
)

// Config says how to reach one API server.
type Config struct {
	// Host is the server's base URL, e.g. "https://127.0.0.1:6443".
	Host        string
	BearerToken string
	CAData      []byte
	// QPS and Burst bound the client-side request rate.
	QPS   float64
	Burst int
	// Timeout bounds non-watch requests. Watches are never given one.
	Timeout time.Duration
	// Transport overrides the transport built from the fields above.
	Transport http.RoundTripper
}

// RoundTripper returns the transport described by c: TLS, then credentials.
func (c *Config) RoundTripper() (http.RoundTripper, error) {
	if c.Transport != nil {
		return c.Transport, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	if len(c.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(c.CAData) {
			return nil, errors.New("config: no certificate in CAData")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	if c.BearerToken == "" {
		return t, nil
	}
	return &bearer{token: c.BearerToken, next: t}, nil
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b *bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}
