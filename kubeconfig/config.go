package kubeconfig

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/redact"
)

// Client-side rate limit used when Config.QPS or Config.Burst is zero.
//
// client-go's 5 QPS / burst 10 date from when one process watched a couple
// of resources. A factory that starts informers for thirty resources sends
// thirty LISTs at once, and each resumed watch is another request; at 5 QPS
// the last informer waits seconds before its first byte. The API server's
// own priority-and-fairness is the real guard today, so the client limit
// only has to stop a runaway loop: 50 QPS with a burst of 100 lets a
// startup burst through untouched and still caps a bug at a rate the server
// shrugs off. A paged list pays once, for its first page (httpwatch.ListAll).
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// Config says how to reach one API server and who to be there.
//
// The zero value of every field is usable and means the documented default,
// so a Config is written as a literal with only what differs:
//
//	cfg := &kubeconfig.Config{Host: "https://10.0.0.1:6443", BearerTokenFile: "/run/token", CAFile: "/run/ca.crt"}
//
// Most programs get one from FromEnvironment (what kubectl would use),
// Load or InCluster instead. RoundTripper turns it into an
// http.RoundTripper; a Config is not used after that, so changing it later
// affects only transports built later.
//
// Secrets (tokens, passwords, private keys, exec plugin environment values)
// are redacted when a Config is formatted with fmt, encoded with
// encoding/json or logged with log/slog.
type Config struct {
	// Host is the server's base URL, "https://host:port" or "http://host:port",
	// optionally with a path prefix (for servers behind a proxy).
	Host string
	// Namespace is the default namespace of the kubeconfig context or the
	// pod's service account; informational, requests name their own.
	Namespace string

	// At most one kind of credential may be set: BearerToken,
	// BearerTokenFile, Username and Password, or Exec. A client certificate
	// may be combined with any of them except Exec.

	// BearerToken is sent as "Authorization: Bearer <token>".
	BearerToken string
	// BearerTokenFile names a file holding the token. The file is read when
	// RoundTripper is called, again whenever the token read is older than
	// TokenFileMaxAge, and at once when the server answers 401: projected
	// service-account tokens are rewritten in place about hourly.
	BearerTokenFile string
	// Username and Password are sent as HTTP basic authentication.
	Username string
	Password string
	// Exec runs a credential plugin to get a token or client certificate.
	Exec *ExecConfig

	// CAData (PEM) or CAFile verifies the server's certificate; neither means
	// the system roots.
	CAData []byte
	CAFile string
	// CertData and KeyData (PEM), or CertFile and KeyFile, are the client
	// certificate presented to the server.
	CertData []byte
	KeyData  []byte
	CertFile string
	KeyFile  string
	// ServerName is the name the server's certificate must carry, when it is
	// not the host in Host (e.g. reaching the server by IP).
	ServerName string
	// Insecure skips verification of the server's certificate. It cannot be
	// combined with CAData or CAFile.
	Insecure bool

	// ProxyURL is the proxy for every request (http, https or socks5 URL).
	// Empty means HTTPS_PROXY, HTTP_PROXY and NO_PROXY from the environment.
	ProxyURL string
	// UserAgent is sent with every request that has none. Empty means
	// "listwatch/<module version> (<GOOS>/<GOARCH>)".
	UserAgent string
	// Impersonate acts as another user (the server checks that the real
	// user may impersonate).
	Impersonate Impersonation

	// QPS and Burst bound the client-side request rate. Zero means
	// DefaultQPS and DefaultBurst; a negative QPS means unlimited. See Rate.
	QPS   float64
	Burst int
	// Timeout bounds each attempt of a non-watch request (a list page, a
	// get, a write, discovery, a lease or an Event), from sending it to the
	// end of its body, so a connection that stops answering mid-way fails
	// the attempt instead of holding it. Zero means DefaultTimeout; a
	// negative Timeout sets no limit beyond the request's context. Watches
	// are never given one: they wait at most Client.WatchHeaderTimeout for
	// the response headers, then stream for as long as they hear from the
	// server (see the reflector's WatchIdleTimeout).
	Timeout time.Duration
	// PingAfter and PingTimeout are the HTTP/2 health check: a connection
	// from which no frame has come for PingAfter is pinged, and closed when
	// the ping has no answer within PingTimeout, which fails every request
	// on it at once (the client retries them; watches resume from their
	// resourceVersion). Zero means DefaultPingAfter and DefaultPingTimeout;
	// a negative PingAfter turns the check off. They apply to https hosts,
	// where the connection is HTTP/2, and not when Transport is set.
	PingAfter   time.Duration
	PingTimeout time.Duration
	// KeepAlive is the TCP keepalive of every connection: after KeepAlive
	// without traffic the system sends a probe, then one every KeepAlive/3,
	// and closes the connection when three go unanswered, so a peer that
	// vanished without a reset is found within 2×KeepAlive of its last
	// packet. Zero means DefaultKeepAlive; negative turns probes off. Not
	// used when Transport is set.
	KeepAlive time.Duration
	// Transport, if set, replaces the transport built from the TLS and proxy
	// fields (which must then be empty); credentials, impersonation and the
	// user agent are still added on top. Tests pass an httptest server's
	// Client().Transport here.
	Transport http.RoundTripper
	// WrapTransport, if set, wraps the transport RoundTripper builds, for
	// metrics, tracing or logging that keep the TLS, proxy and credentials
	// configured here. The wrapper sits outside the credentials: the
	// requests it sees carry no Authorization header, and every attempt of
	// a retried request passes through it.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Clock times token-file re-reads, exec credential expiry and a watch's
	// wait for response headers. Nil means clock.Real.
	Clock clock.Clock
}

// Impersonation names the user a request acts as. Groups, UID and Extra
// need User.
type Impersonation struct {
	User   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

func (i Impersonation) isZero() bool {
	return i.User == "" && i.UID == "" && len(i.Groups) == 0 && len(i.Extra) == 0
}

// TokenFileMaxAge is how long a token read from Config.BearerTokenFile is
// used before the file is read again. Kubelet rewrites projected tokens once
// 80% of their lifetime (at least an hour) has passed, so a minute is far
// inside the window in which the old token stays valid.
const TokenFileMaxAge = time.Minute

// Rate returns the client-side rate limit c asks for: requests per second
// and burst, with the defaults applied. Unlimited is qps = +Inf (which is
// rate.Inf in golang.org/x/time/rate).
func (c *Config) Rate() (qps float64, burst int) {
	qps, burst = c.QPS, c.Burst
	switch {
	case qps < 0:
		return math.Inf(1), 0
	case qps == 0:
		qps = DefaultQPS
	}
	if burst <= 0 {
		burst = DefaultBurst
	}
	return qps, burst
}

// RoundTripper builds the transport c describes: TLS (server verification
// and client certificate), proxy, then credentials, impersonation and user
// agent on every request. When the server answers 401 and the credential
// can change (token file, exec plugin), the transport fetches a fresh one
// and sends the request once more if its body can be replayed
// (Request.GetBody set, as http.NewRequest does for in-memory bodies).
//
// Credentials are sent only to the server in Host (same scheme, host and
// port): a request, or a redirect, to any other is sent without them, and a
// redirect from https to http is refused.
//
// Files named by c are read now, so a missing file is reported here; exec
// plugins run on the first request.
func (c *Config) RoundTripper() (http.RoundTripper, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	host, _ := url.Parse(c.Host) // validate parsed it
	clk := c.Clock
	if clk == nil {
		clk = clock.Real
	}
	rt := &roundTripper{userAgent: c.UserAgent, imp: c.Impersonate, origin: origin(host)}
	if rt.userAgent == "" {
		rt.userAgent = defaultUserAgent()
	}

	var ea *execAuth
	if c.Exec != nil {
		cluster, err := c.execCluster()
		if err != nil {
			return nil, err
		}
		ea = newExecAuth(c.Exec, cluster, clk)
		rt.auth = ea
	}

	if c.Transport != nil {
		rt.base = c.Transport
		rt.caSource = "the CA of the custom Transport"
	} else {
		t, caSource, err := c.httpTransport(ea)
		if err != nil {
			return nil, err
		}
		rt.base, rt.caSource = t, caSource
	}
	if ea != nil {
		// A new client certificate is presented only on new connections.
		ea.onCertChange = rt.CloseIdleConnections
		if c.Transport != nil {
			ea.certUnusable = true
		}
	}

	switch {
	case c.BearerToken != "":
		rt.auth = staticAuth("Bearer " + c.BearerToken)
	case c.BearerTokenFile != "":
		tf := &tokenFile{path: c.BearerTokenFile, clock: clk}
		if _, err := tf.credential(context.Background()); err != nil {
			return nil, err
		}
		rt.auth = tf
	case c.Username != "" || c.Password != "":
		r := http.Request{Header: http.Header{}}
		r.SetBasicAuth(c.Username, c.Password)
		rt.auth = staticAuth(r.Header.Get("Authorization"))
	}
	if c.WrapTransport == nil {
		return rt, nil
	}
	w := c.WrapTransport(rt)
	if w == nil {
		return nil, errors.New("config: WrapTransport returned no transport")
	}
	return wrapped{RoundTripper: w, inner: rt}, nil
}

// wrapped is the transport WrapTransport made, which may not pass
// CloseIdleConnections on: that still reaches the connections.
type wrapped struct {
	http.RoundTripper
	inner *roundTripper
}

func (w wrapped) CloseIdleConnections() { w.inner.CloseIdleConnections() }

// validate rejects combinations that would silently ignore a field.
func (c *Config) validate() error {
	u, err := url.Parse(c.Host)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("config: Host %q: want an http:// or https:// URL with a host", redact.URL(c.Host))
	}
	creds := 0
	for _, set := range []bool{c.BearerToken != "", c.BearerTokenFile != "", c.Username != "" || c.Password != "", c.Exec != nil} {
		if set {
			creds++
		}
	}
	if creds > 1 {
		return errors.New("config: set only one of BearerToken, BearerTokenFile, Username/Password and Exec")
	}
	if c.Exec != nil && c.hasClientCert() {
		return errors.New("config: a client certificate cannot be combined with Exec (the plugin supplies the credential)")
	}
	if len(c.CAData) > 0 && c.CAFile != "" {
		return errors.New("config: set CAData or CAFile, not both")
	}
	if len(c.CertData) > 0 && c.CertFile != "" {
		return errors.New("config: set CertData or CertFile, not both")
	}
	if len(c.KeyData) > 0 && c.KeyFile != "" {
		return errors.New("config: set KeyData or KeyFile, not both")
	}
	if (len(c.CertData) > 0 || c.CertFile != "") != (len(c.KeyData) > 0 || c.KeyFile != "") {
		return errors.New("config: a client certificate needs both a certificate (CertData/CertFile) and a key (KeyData/KeyFile)")
	}
	if c.Insecure && (len(c.CAData) > 0 || c.CAFile != "") {
		return errors.New("config: Insecure cannot be combined with CAData or CAFile: verify against the CA or skip verification, not both")
	}
	if c.Transport != nil && (c.hasTLS() || c.ProxyURL != "") {
		return errors.New("config: Transport is set, so the TLS and proxy fields would be ignored; configure them on the Transport instead")
	}
	if c.Impersonate.User == "" && !c.Impersonate.isZero() {
		return errors.New("config: Impersonate needs User when Groups, UID or Extra are set")
	}
	if c.Exec != nil {
		if err := c.Exec.validate(); err != nil {
			return err
		}
	}
	return nil
}

func (c *Config) hasClientCert() bool {
	return len(c.CertData) > 0 || c.CertFile != "" || len(c.KeyData) > 0 || c.KeyFile != ""
}

func (c *Config) hasTLS() bool {
	return c.hasClientCert() || len(c.CAData) > 0 || c.CAFile != "" || c.ServerName != "" || c.Insecure
}

// httpTransport builds the base transport and says where its CA comes from,
// for error messages.
func (c *Config) httpTransport(ea *execAuth) (*http.Transport, string, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// A dialer of our own turns HTTP/2 off unless asked for.
	t.DialContext, t.ForceAttemptHTTP2 = c.dialer().DialContext, true
	t.TLSHandshakeTimeout = tlsHandshakeTimeout
	if after, timeout := c.HealthCheck(); after > 0 {
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: after, PingTimeout: timeout}
	}
	// A chunked body's framing goes through this buffer: at net/http's
	// default 4 KB every chunk header is a 4 KB read; raw's readers ask
	// for 64 KB or more while data flows, and so does this.
	t.ReadBufferSize = 64 << 10
	if c.ProxyURL != "" {
		p, err := url.Parse(c.ProxyURL)
		if err != nil || p.Host == "" {
			return nil, "", fmt.Errorf("config: ProxyURL %q is not a URL with a host", redact.URL(c.ProxyURL))
		}
		switch p.Scheme {
		case "http", "https", "socks5", "socks5h":
		default:
			return nil, "", fmt.Errorf("config: ProxyURL %q: scheme must be http, https, socks5 or socks5h", p.Redacted())
		}
		t.Proxy = http.ProxyURL(p)
	}

	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName, InsecureSkipVerify: c.Insecure}
	caSource := "the system roots (no CAData or CAFile set)"
	ca, err := c.caPEM()
	if err != nil {
		return nil, "", err
	}
	if ca != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(ca) {
			return nil, "", fmt.Errorf("config: %s holds no PEM certificate", c.caName())
		}
		tc.RootCAs = pool
		caSource = c.caName()
	}

	if c.hasClientCert() {
		cert, err := c.clientCert()
		if err != nil {
			return nil, "", err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if ea != nil {
		tc.GetClientCertificate = ea.clientCertificate
	}
	t.TLSClientConfig = tc
	return t, caSource, nil
}

func (c *Config) caName() string {
	if c.CAFile != "" {
		return "CAFile " + c.CAFile
	}
	return "CAData"
}

// caPEM returns the configured CA bundle, nil if none.
func (c *Config) caPEM() ([]byte, error) {
	if c.CAFile == "" {
		return c.CAData, nil
	}
	b, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("config: read CAFile: %w", err)
	}
	return b, nil
}

func (c *Config) clientCert() (tls.Certificate, error) {
	certPEM, keyPEM := c.CertData, c.KeyData
	if c.CertFile != "" {
		b, err := os.ReadFile(c.CertFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("config: read CertFile: %w", err)
		}
		certPEM = b
	}
	if c.KeyFile != "" {
		b, err := os.ReadFile(c.KeyFile)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("config: read KeyFile: %w", err)
		}
		keyPEM = b
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("config: load client certificate (%s, %s): %w",
			orData(c.CertFile, "CertData"), orData(c.KeyFile, "KeyData"), err)
	}
	return cert, nil
}

func orData(file, data string) string {
	if file != "" {
		return file
	}
	return data
}

// execCluster is what a plugin with provideClusterInfo learns about the
// server.
func (c *Config) execCluster() (*execCluster, error) {
	if !c.Exec.ProvideClusterInfo {
		return nil, nil
	}
	ca, err := c.caPEM()
	if err != nil {
		return nil, err
	}
	return &execCluster{
		Server:     c.Host,
		ServerName: c.ServerName,
		Insecure:   c.Insecure,
		CAData:     ca,
		ProxyURL:   c.ProxyURL,
		Config:     c.Exec.ClusterConfig,
	}, nil
}

var defaultUserAgent = sync.OnceValue(func() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		const module = "github.com/listwatch/listwatch"
		if bi.Main.Path == module && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, d := range bi.Deps {
			if d.Path == module && d.Version != "" {
				v = d.Version
			}
		}
	}
	return fmt.Sprintf("listwatch/%s (%s/%s)", v, runtime.GOOS, runtime.GOARCH)
})
