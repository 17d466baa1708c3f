package kubeconfig

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/require"
)

func TestCredentialsAndHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(echo))
	defer srv.Close()
	tokenFile := writeFile(t, t.TempDir(), "token", []byte("file-token\n"))

	tests := []struct {
		name    string
		cfg     Config
		reqUA   string
		auth    string
		ua      string
		headers map[string][]string
	}{
		{name: "anonymous", cfg: Config{}, auth: ""},
		{name: "bearer", cfg: Config{BearerToken: "abc"}, auth: "Bearer abc"},
		{name: "token file trimmed", cfg: Config{BearerTokenFile: tokenFile}, auth: "Bearer file-token"},
		{name: "basic", cfg: Config{Username: "alice", Password: "s3cret"}, auth: "Basic YWxpY2U6czNjcmV0"},
		{name: "user agent", cfg: Config{UserAgent: "my-controller/1.2"}, ua: "my-controller/1.2"},
		{name: "request user agent wins", cfg: Config{UserAgent: "my-controller/1.2"}, reqUA: "mine", ua: "mine"},
		{
			name: "impersonation",
			cfg: Config{BearerToken: "abc", Impersonate: Impersonation{
				User: "jane", UID: "42", Groups: []string{"dev", "ops"},
				Extra: map[string][]string{"example.com/scopes": {"view", "edit"}, "reason": {"on call"}},
			}},
			auth: "Bearer abc",
			headers: map[string][]string{
				"Impersonate-User":                       {"jane"},
				"Impersonate-Uid":                        {"42"},
				"Impersonate-Group":                      {"dev", "ops"},
				"Impersonate-Extra-Example.com%2fscopes": {"view", "edit"},
				"Impersonate-Extra-Reason":               {"on call"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Host = srv.URL
			rt, err := tt.cfg.RoundTripper()
			require.NoError(t, err)
			closeIdle(t, rt)
			req, err := http.NewRequest(http.MethodGet, srv.URL+"/api", nil)
			require.NoError(t, err)
			if tt.reqUA != "" {
				req.Header.Set("User-Agent", tt.reqUA)
			}
			resp, err := rt.RoundTrip(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var s seen
			require.NoError(t, jsonDecode(resp.Body, &s))
			require.Equal(t, tt.auth, s.Authorization)
			if tt.ua != "" {
				require.Equal(t, tt.ua, s.UserAgent)
			} else {
				require.Regexp(t, `^listwatch/\S+ \(\w+/\w+\)$`, s.UserAgent)
			}
			for k, v := range tt.headers {
				require.Equal(t, v, s.Header[k], k)
			}
			require.Empty(t, req.Header.Get("Authorization"), "the caller's request must not be modified")
		})
	}
}

func TestDefaultUserAgent(t *testing.T) {
	require.Regexp(t, regexp.MustCompile(`^listwatch/(devel|v\S+) \(`+"[a-z0-9]+/[a-z0-9]+"+`\)$`), defaultUserAgent())
}

func TestEscapeHeaderKey(t *testing.T) {
	for in, want := range map[string]string{
		"scopes":             "scopes",
		"example.com/scopes": "example.com%2Fscopes",
		"a b":                "a%20b",
		"100%":               "100%25",
		"ünï":                "%C3%BCn%C3%AF",
	} {
		require.Equal(t, want, escapeHeaderKey(in), in)
	}
}

// tokenServer accepts only the token in *valid and counts requests per token.
func tokenServer(t *testing.T, valid *string) (*httptest.Server, map[string]int) {
	seenTokens := map[string]int{}
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		seenTokens[tok]++
		ok := tok == *valid
		mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		echo(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, seenTokens
}

func TestTokenFileRotation(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clock.NewFake(start)
	valid := "old"
	srv, seenTokens := tokenServer(t, &valid)
	path := writeFile(t, t.TempDir(), "token", []byte("old"))
	rt, err := (&Config{Host: srv.URL, BearerTokenFile: path, Clock: clk}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	s, code, err := getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer old", s.Authorization)

	// The kubelet rewrites the file; the old token stays valid for a while.
	require.NoError(t, os.WriteFile(path, []byte("new"), 0o600))
	clk.Step(TokenFileMaxAge - time.Second)
	s, _, _ = getWith(t, rt, srv.URL)
	require.Equal(t, "Bearer old", s.Authorization, "re-read before TokenFileMaxAge")

	clk.Step(time.Second)
	valid = "new"
	s, code, _ = getWith(t, rt, srv.URL)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer new", s.Authorization)

	// A failed re-read keeps the last token.
	require.NoError(t, os.Remove(path))
	clk.Step(TokenFileMaxAge)
	s, code, _ = getWith(t, rt, srv.URL)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "Bearer new", s.Authorization)
	require.Equal(t, map[string]int{"old": 2, "new": 2}, seenTokens)
}

func TestTokenFileRereadOn401(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	valid := "new"
	srv, seenTokens := tokenServer(t, &valid)
	dir := t.TempDir()
	path := writeFile(t, dir, "token", []byte("old"))
	rt, err := (&Config{Host: srv.URL, BearerTokenFile: path, Clock: clk}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)

	// The file still holds the rejected token: no pointless retry.
	_, code, err := getWith(t, rt, srv.URL)
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, map[string]int{"old": 1}, seenTokens)

	// Rotated before the minute is up: the 401 makes us look at once, and a
	// POST with a replayable body is sent again, body and all.
	writeFile(t, dir, "token", []byte("new"))
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v1/namespaces", strings.NewReader(`{"kind":"Namespace"}`))
	require.NoError(t, err)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var s seen
	require.NoError(t, jsonDecode(resp.Body, &s))
	require.Equal(t, `{"kind":"Namespace"}`, s.Body)
	require.Equal(t, "Bearer new", s.Authorization)
	require.Equal(t, map[string]int{"old": 2, "new": 1}, seenTokens)
}

func TestNoRetryWithoutReplayableBody(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	valid := "new"
	srv, seenTokens := tokenServer(t, &valid)
	dir := t.TempDir()
	path := writeFile(t, dir, "token", []byte("old"))
	rt, err := (&Config{Host: srv.URL, BearerTokenFile: path, Clock: clk}).RoundTripper()
	require.NoError(t, err)
	closeIdle(t, rt)
	writeFile(t, dir, "token", []byte("new"))

	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/api", io.NopCloser(bytes.NewBufferString("{}")))
	require.NoError(t, err)
	require.Nil(t, req.GetBody)
	resp, err := rt.RoundTrip(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a body that cannot be replayed is not resent")

	_, code, _ := getWith(t, rt, srv.URL)
	require.Equal(t, http.StatusOK, code, "the next request has the fresh token")
	require.Equal(t, map[string]int{"old": 1, "new": 1}, seenTokens)
}

func TestTokenFileErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := (&Config{Host: "https://x", BearerTokenFile: dir + "/missing"}).RoundTripper()
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, "read BearerTokenFile: open "+dir+"/missing")

	empty := writeFile(t, dir, "empty", []byte(" \n"))
	_, err = (&Config{Host: "https://x", BearerTokenFile: empty}).RoundTripper()
	require.ErrorContains(t, err, "read BearerTokenFile "+empty+": the file is empty")
}

func TestStaticTokenNoRetry(t *testing.T) {
	valid := "right"
	srv, seenTokens := tokenServer(t, &valid)
	_, code, err := get(t, &Config{Host: srv.URL, BearerToken: "wrong"})
	require.NoError(t, err)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, map[string]int{"wrong": 1}, seenTokens)
}
