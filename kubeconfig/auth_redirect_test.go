package kubeconfig

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// authRecorder is a server that remembers the Authorization header of every
// request it gets.
type authRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.seen = append(a.seen, r.Header.Get("Authorization"))
	a.mu.Unlock()
	io.WriteString(w, "{}")
}

func (a *authRecorder) got() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.seen...)
}

// redirector sends /away to target and records what /home receives.
func redirector(target string, home *authRecorder) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/landing", http.StatusFound)
	})
	mux.HandleFunc("/stay", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/home", http.StatusFound)
	})
	mux.Handle("/home", home)
	return mux
}

// Credentials go to the configured server only, never to where it redirects.
func TestCredentialsNotSentAcrossRedirects(t *testing.T) {
	tokenFile := writeFile(t, t.TempDir(), "token", []byte("file-token"))
	creds := []struct {
		name string
		cfg  Config
		want string
	}{
		{"bearer", Config{BearerToken: "hunter2"}, "Bearer hunter2"},
		{"basic", Config{Username: "admin", Password: "hunter2"}, "Basic YWRtaW46aHVudGVyMg=="},
		{"token file", Config{BearerTokenFile: tokenFile}, "Bearer file-token"},
		{"exec", Config{Exec: fakePluginConfig(t, ExecAPIVersionV1, "FAKE_TOKEN", "exec-token")}, "Bearer exec-token"},
	}
	for _, tt := range creds {
		t.Run(tt.name, func(t *testing.T) {
			other := &authRecorder{}
			otherSrv := httptest.NewServer(other)
			defer otherSrv.Close()
			home := &authRecorder{}
			srv := httptest.NewServer(redirector(otherSrv.URL, home))
			defer srv.Close()

			cfg := tt.cfg
			cfg.Host = srv.URL
			rt, err := cfg.RoundTripper()
			require.NoError(t, err)
			closeIdle(t, rt)
			hc := &http.Client{Transport: rt}
			for _, path := range []string{"/away", "/stay"} {
				resp, err := hc.Get(srv.URL + path)
				require.NoError(t, err)
				resp.Body.Close()
				require.Equal(t, http.StatusOK, resp.StatusCode)
			}
			require.Equal(t, []string{""}, other.got(), "another port of the same host is another server")
			require.Equal(t, []string{tt.want}, home.got(), "a redirect within the server keeps the credential")

		})
	}
}

// A caller's own Authorization header is not carried to another server
// either (net/http forwards it to another port of the same host).
func TestCallerAuthorizationNotSentAcrossRedirects(t *testing.T) {
	other := &authRecorder{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	srv := httptest.NewServer(redirector(otherSrv.URL, &authRecorder{}))
	defer srv.Close()
	rt, err := (&Config{Host: srv.URL}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)
	req, err := http.NewRequest(http.MethodGet, srv.URL+"/away", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer hunter2")
	resp, err := (&http.Client{Transport: rt}).Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, []string{""}, other.got())
}

// An https server cannot send the client, credentials or not, to plain http.
func TestRedirectFromHTTPSToHTTPRefused(t *testing.T) {
	other := &authRecorder{}
	otherSrv := httptest.NewServer(other)
	defer otherSrv.Close()
	ca := newTestCA(t, "ca")
	srv := newTLSServer(t, ca, false, redirector(otherSrv.URL, &authRecorder{}))
	for _, cfg := range []Config{{}, {BearerToken: "hunter2"}} {
		cfg.Host, cfg.CAData, cfg.ServerName = srv.URL, ca.pem, "kubernetes.test"
		rt, err := cfg.RoundTripper()
		require.NoError(t, err)
		closeIdle(t, rt)
		_, err = (&http.Client{Transport: rt}).Get(srv.URL + "/away")
		require.ErrorContains(t, err, "refusing a redirect from https to http")
		require.NotContains(t, err.Error(), "hunter2")
	}
	require.Empty(t, other.got())
}
