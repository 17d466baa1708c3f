package kubeconfig

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/internal/redact"
)

// roundTripper adds the user agent, impersonation headers and credentials of
// a Config to each request, and retries once with a fresh credential after a
// 401 when the credential can change.
type roundTripper struct {
	base      http.RoundTripper
	auth      authenticator // nil: anonymous
	userAgent string
	imp       Impersonation
	caSource  string // where the server CA came from, for TLS errors
	// origin is the configured server as scheme://host:port: credentials
	// are sent there and nowhere else.
	origin string
}

// credential is what one request is sent with. id changes whenever the
// credential does, so a 401 for an old credential does not throw away a
// newer one that another request already fetched.
type credential struct {
	authorization string // the Authorization header, "" for none
	id            uint64
}

type authenticator interface {
	// credential returns the credential to send now.
	credential(ctx context.Context) (credential, error)
	// refresh is told that the server rejected c. It returns a different
	// credential to retry with, or ok=false when retrying cannot help.
	refresh(ctx context.Context, c credential) (next credential, ok bool)
}

// Format hides the credentials the transport holds.
func (t *roundTripper) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "httpwatch round tripper (server CA: %s; credentials hidden)", t.caSource)
}

// CloseIdleConnections closes the idle connections of the underlying
// transport, so http.Client.CloseIdleConnections reaches it.
func (t *roundTripper) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

func (t *roundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkRedirect(req); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	if r.Header.Get("User-Agent") == "" {
		r.Header.Set("User-Agent", t.userAgent)
	}
	t.impersonate(r.Header)
	foreign := origin(req.URL) != t.origin
	if foreign && req.Response != nil {
		// A redirect to another server: net/http copies the caller's
		// Authorization to another port of the same host.
		r.Header.Del("Authorization")
	}
	if t.auth == nil || foreign {
		return t.send(r)
	}
	c, err := t.auth.credential(req.Context())
	if err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%s %s: get credentials: %w", req.Method, req.URL.Redacted(), err)
	}
	setAuthorization(r.Header, c)
	resp, err := t.send(r)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		return redactErrorBody(resp, c), err
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	next, ok := t.auth.refresh(req.Context(), c)
	if !ok || !replayable {
		// The next request uses the fresh credential, if there is one.
		return redactErrorBody(resp, c), nil
	}
	retry := r.Clone(req.Context())
	if req.GetBody != nil && req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return redactErrorBody(resp, c), nil
		}
		retry.Body = body
	}
	// Drain a little so the connection can be reused; a 401 body is small.
	io.CopyN(io.Discard, resp.Body, 4<<10)
	resp.Body.Close()
	setAuthorization(retry.Header, next)
	resp, err = t.send(retry)
	return redactErrorBody(resp, next), err
}

// redactErrorBody cuts the credential c out of an error response's body,
// which servers and proxies sometimes echo and callers put in errors. The
// first redact.BodyLimit bytes, all that error handling reads, are redacted.
func redactErrorBody(resp *http.Response, c credential) *http.Response {
	if resp == nil || resp.StatusCode < 400 || c.authorization == "" {
		return resp
	}
	// A read error recurs when the rest of the body is read.
	head, _ := io.ReadAll(io.LimitReader(resp.Body, redact.BodyLimit))
	clean := redact.Secrets(string(head), redact.AuthorizationSecrets(c.authorization))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(strings.NewReader(clean), resp.Body), resp.Body}
	resp.ContentLength = -1
	return resp
}

// checkRedirect refuses to follow a redirect from https to plain http,
// which would send the request (and any cookie or header the caller set)
// in the clear. req.Response is set only on requests following a redirect.
func checkRedirect(req *http.Request) error {
	prev := req.Response
	if prev == nil || prev.Request == nil || prev.Request.URL.Scheme != "https" || req.URL.Scheme != "http" {
		return nil
	}
	return fmt.Errorf("refusing a redirect from https to http (%s to %s)", prev.Request.URL.Redacted(), req.URL.Redacted())
}

// origin is u's scheme, host and port, the port made explicit.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "https":
			port = "443"
		case "http":
			port = "80"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

func setAuthorization(h http.Header, c credential) {
	if c.authorization != "" {
		h.Set("Authorization", c.authorization)
	}
}

// send calls the base transport and explains certificate failures, the most
// common first error against a new cluster.
func (t *roundTripper) send(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err == nil {
		return resp, nil
	}
	var verr *tls.CertificateVerificationError
	if !errors.As(err, &verr) {
		return nil, err
	}
	hint := ""
	var herr x509.HostnameError
	var uerr x509.UnknownAuthorityError
	switch {
	case errors.As(err, &herr):
		hint = " (set ServerName, tls-server-name in a kubeconfig, to the name the certificate carries)"
	case errors.As(err, &uerr):
		hint = " (the server's certificate is not signed by that CA: check the cluster's certificate-authority)"
	}
	return nil, fmt.Errorf("verify the certificate of %s against %s%s: %w", r.URL.Host, t.caSource, hint, err)
}

func (t *roundTripper) impersonate(h http.Header) {
	if t.imp.User == "" {
		return
	}
	h.Set("Impersonate-User", t.imp.User)
	if t.imp.UID != "" {
		h.Set("Impersonate-Uid", t.imp.UID)
	}
	for _, g := range t.imp.Groups {
		h.Add("Impersonate-Group", g)
	}
	for k, vs := range t.imp.Extra {
		name := "Impersonate-Extra-" + escapeHeaderKey(k)
		for _, v := range vs {
			h.Add(name, v)
		}
	}
}

// escapeHeaderKey percent-encodes what may not appear in a header name; the
// API server unescapes extra keys, so "example.com/scopes" survives.
func escapeHeaderKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c != '%' && isTokenChar(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// isTokenChar reports whether c may appear in an HTTP header name.
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// staticAuth is a fixed Authorization header (bearer token or basic auth);
// retrying a 401 with it cannot help.
type staticAuth string

func (s staticAuth) credential(context.Context) (credential, error) {
	return credential{authorization: string(s)}, nil
}

func (s staticAuth) refresh(context.Context, credential) (credential, bool) {
	return credential{}, false
}

// tokenFile serves the bearer token in a file, re-reading it when the copy
// in memory is older than TokenFileMaxAge or the server rejected it.
type tokenFile struct {
	path  string
	clock clock.Clock

	mu     sync.Mutex
	token  string
	readAt time.Time
	id     uint64
}

func (f *tokenFile) credential(context.Context) (credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.token == "" || f.clock.Since(f.readAt) >= TokenFileMaxAge {
		if err := f.loadLocked(); err != nil && f.token == "" {
			return credential{}, err
		}
		// On a failed re-read keep the last token: it is most likely still
		// valid, and a 401 will make us look again.
	}
	return f.credentialLocked(), nil
}

func (f *tokenFile) refresh(_ context.Context, c credential) (credential, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.id == c.id {
		if err := f.loadLocked(); err != nil {
			return credential{}, false
		}
	}
	return f.credentialLocked(), f.id != c.id
}

func (f *tokenFile) credentialLocked() credential {
	return credential{authorization: "Bearer " + f.token, id: f.id}
}

func (f *tokenFile) loadLocked() error {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return fmt.Errorf("read BearerTokenFile: %w", err)
	}
	tok := string(bytes.TrimSpace(b))
	if tok == "" {
		return fmt.Errorf("read BearerTokenFile %s: the file is empty", f.path)
	}
	if tok != f.token {
		f.token = tok
		f.id++
	}
	f.readAt = f.clock.Now()
	return nil
}
