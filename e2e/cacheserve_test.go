package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/stretchr/testify/require"
)

// TestServedCacheAuthorizesAsRealServer is decision 45: a served cache of
// configmaps, authorized by its Reviewer (TokenReview and
// SubjectAccessReview against the real server, with the node cache's own
// credentials) and forwarding what it cannot answer with the client's
// own token, gives each client the status code the real server gives it
// for the same request, and a 403 in its words: the admin is served and
// may write (forwarded), "nobody" is refused, a token the server does not
// know is a 401. With REALAPI_AUTHZ=RBAC (as .ci/run sets it) "nobody"
// may do nothing. kubectl, pointed at the cache, creates (through the
// API server's discovery and the Proxy) and reads.
func TestServedCacheAuthorizesAsRealServer(t *testing.T) {
	if realapi.Env(t, "REALAPI_AUTHZ") != "RBAC" {
		t.Skip("needs REALAPI_AUTHZ=RBAC, so that the nobody token is refused")
	}
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps)
	inf := listwatch.NewInformer(cms, 0)
	srv := &cacheserve.Server{}
	var err error
	srv.Proxy, err = cacheserve.NewProxy(config(t))
	require.NoError(t, err)
	srv.Authorize = (&cacheserve.Reviewer{Client: c}).Authorize
	_, err = srv.Add(inf, cms, apiserve.APIResource{})
	require.NoError(t, err)
	run(t, inf)
	// TLS: kubectl sends a token only to an https server.
	local := httptest.NewTLSServer(srv)
	t.Cleanup(local.Close)

	admin, nobody := realapi.Env(t, "REALAPI_TOKEN"), realapi.Env(t, "REALAPI_TOKEN_NOBODY")
	real := &http.Client{Transport: realTransport(t)}
	for i, c := range []struct{ method, path, token string }{
		{"GET", "/api/v1/configmaps", admin},
		{"GET", "/api/v1/configmaps", nobody},
		{"GET", "/api/v1/configmaps", "not-a-token"},
		{"GET", "/api/v1/namespaces/" + ns + "/configmaps?watch=1&timeoutSeconds=1", admin},
		{"GET", "/api/v1/namespaces/" + ns + "/configmaps?watch=1&timeoutSeconds=1", nobody},
		{"GET", "/api/v1/secrets?limit=1", admin}, // not cached: forwarded
		{"GET", "/api/v1/secrets?limit=1", nobody},
		{"POST", "/api/v1/namespaces/" + ns + "/configmaps", admin},
		{"POST", "/api/v1/namespaces/" + ns + "/configmaps", nobody},
		{"GET", "/version", nobody},
		{"GET", "/version", "not-a-token"},
	} {
		body := func(n string) string { return fmt.Sprintf(`{"metadata":{"name":"cm-%d-%s"}}`, i, n) }
		want, wantMsg := status(t, real, realapi.Env(t, "REALAPI_URL"), c.method, c.path, c.token, body("real"))
		got, gotMsg := status(t, local.Client(), local.URL, c.method, c.path, c.token, body("local"))
		require.Equal(t, want, got, "%s %s as %s", c.method, c.path, who(c.token, admin, nobody))
		if want == http.StatusForbidden { // worded as the real server words it
			require.Equal(t, wantMsg, gotMsg)
		}
	}

	// kubectl, pointed at the cache with its own token, writes (forwarded,
	// protobuf and all) and reads what the cache serves.
	kubectl := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		all := append([]string{"--server", local.URL, "--insecure-skip-tls-verify", "--token", admin, "-n", ns}, args...)
		var stderr strings.Builder
		cmd := exec.CommandContext(ctx, realapi.Env(t, "REALAPI_KUBECTL"), all...)
		cmd.Stderr = &stderr // the Warnings (decision 43) go there
		out, err := cmd.Output()
		require.NoError(t, err, "kubectl %s: %s", strings.Join(args, " "), stderr.String())
		return string(out)
	}
	require.Equal(t, "configmap/made-by-kubectl created\n", kubectl("create", "configmap", "made-by-kubectl", "--from-literal=a=b"))
	require.Eventually(t, func() bool {
		return strings.Contains(kubectl("get", "configmaps", "-o", "name"), "configmap/made-by-kubectl")
	}, wait, 50*time.Millisecond)
	require.Equal(t, "b", kubectl("get", "configmap", "made-by-kubectl", "-o", "jsonpath={.data.a}"))
}

func who(tok, admin, nobody string) string {
	switch tok {
	case admin:
		return "admin"
	case nobody:
		return "nobody"
	}
	return "an unknown token"
}

// realTransport trusts the real server's CA.
func realTransport(t *testing.T) http.RoundTripper {
	t.Helper()
	cfg := config(t)
	cfg.BearerToken = "" // each request carries its own
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	return rt
}

// status makes a request and returns its code and, for a Status, its
// message.
func status(t *testing.T, hc *http.Client, base, method, path, token, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, base+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var st struct{ Kind, Message string }
	if json.Unmarshal(b, &st) == nil && st.Kind == "Status" {
		return resp.StatusCode, st.Message
	}
	return resp.StatusCode, ""
}

// TestServedCacheThroughAnOutage is decision 45 on the real server: with
// the kube-apiserver killed, the served cache goes on answering lists at
// the last version known, every response carrying the staleness Warning,
// and a local watch stays open; once it is back, a change made then
// reaches the local watch (or, if the restarted server answered the
// cache's resumed watch 410, the local watch ends with a 410 too and the
// change is listed), the Warning goes, and no version served (list or
// watch event) ever went backwards.
func TestServedCacheThroughAnOutage(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	_, err := cms.Create(context.Background(), configMap(ns, "before", "1"))
	require.NoError(t, err)
	inf := listwatch.NewInformer(cms, 0)
	inf.Logger = slog.New(slog.DiscardHandler) // the outage is said at Warn: not this test's
	srv := &cacheserve.Server{Authorize: func(*http.Request) error { return nil }}
	_, err = srv.Add(inf, cms, apiserve.APIResource{})
	require.NoError(t, err)
	run(t, inf)
	local := httptest.NewServer(srv)
	t.Cleanup(func() { local.CloseClientConnections(); local.Close() })
	path := "/api/v1/namespaces/" + ns + "/configmaps"
	// tryList lists path on the served cache: its version, the names and
	// the Warning headers.
	tryList := func() (int64, []string, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, local.URL+path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, "", err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return 0, nil, "", fmt.Errorf("list: %s", resp.Status)
		}
		var l struct {
			Metadata struct{ ResourceVersion string }
			Items    []struct{ Metadata struct{ Name string } }
		}
		if err := json.NewDecoder(resp.Body).Decode(&l); err != nil {
			return 0, nil, "", err
		}
		rv, err := strconv.ParseInt(l.Metadata.ResourceVersion, 10, 64)
		if err != nil {
			return 0, nil, "", err
		}
		var names []string
		for _, it := range l.Items {
			names = append(names, it.Metadata.Name)
		}
		return rv, names, strings.Join(resp.Header.Values("Warning"), "|"), nil
	}
	list := func() (int64, []string, string) {
		rv, names, warning, err := tryList()
		require.NoError(t, err)
		return rv, names, warning
	}
	rv0, names, warning := list()
	require.Equal(t, []string{"before"}, names)
	require.NotContains(t, warning, "not been heard")

	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, local.URL+path+"?watch=1&allowWatchBookmarks=true&resourceVersion="+strconv.FormatInt(rv0, 10), nil)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan string, 100)
	go func() {
		defer close(events)
		dec := json.NewDecoder(resp.Body)
		for {
			var ev struct {
				Type   string
				Object struct {
					Metadata struct{ Name, ResourceVersion string }
					Code     int // an ERROR's Status
				}
			}
			if dec.Decode(&ev) != nil {
				return
			}
			if ev.Type == "ERROR" {
				events <- fmt.Sprintf("ERROR %d", ev.Object.Code)
				continue
			}
			events <- ev.Type + " " + ev.Object.Metadata.Name + " " + ev.Object.Metadata.ResourceVersion
		}
	}()

	dir := realapi.Env(t, "REALAPI_DIR")
	args, err := os.ReadFile(filepath.Join(dir, "apiserver.args"))
	require.NoError(t, err)
	killAPIServer(t, dir)
	require.Eventually(t, func() bool { return srv.Stats().Stale }, wait, 20*time.Millisecond, "stale once the watch cannot resume")
	rv1, names, warning := list()
	require.Equal(t, rv0, rv1)
	require.Equal(t, []string{"before"}, names)
	require.Contains(t, warning, `299 - "listwatch cache: the API server has not been heard from since `)

	restartAPIServer(t, dir, strings.TrimSpace(string(args)))
	_, err = cms.Create(context.Background(), configMap(ns, "after", "2"))
	require.NoError(t, err)
	last := rv0
	seen := false
	for !seen {
		select {
		case ev, ok := <-events:
			require.True(t, ok, "the local watch ended")
			f := strings.Fields(ev)
			if f[0] == "ERROR" {
				// The restarted kube-apiserver's watch cache starts at the
				// version it restarted at: if its own writes moved etcd on
				// meanwhile, it answers the resumed watch 410, the cache
				// relists and ends local watches with 410 (decision 43),
				// and only then.
				require.Equal(t, "ERROR 410", ev, "the local watch ended")
				require.NotZero(t, inf.Stats().WatchEnds.Gone, "the local watch ended with a 410 the API server never sent")
				seen = true
				continue
			}
			rv, err := strconv.ParseInt(f[len(f)-1], 10, 64)
			require.NoError(t, err, ev)
			require.GreaterOrEqual(t, rv, last, "a version went backwards: %s", ev)
			last = rv
			seen = strings.HasPrefix(ev, "ADDED after ")
		case <-time.After(2 * wait):
			t.Fatal("the local watch did not see the change made after the outage")
		}
	}
	require.Eventually(t, func() bool { return !srv.Stats().Stale }, wait, 20*time.Millisecond, "current once heard again")
	var rv2 int64
	require.Eventually(t, func() bool {
		var err error
		rv2, names, warning, err = tryList()
		return err == nil && slices.Equal(names, []string{"after", "before"})
	}, wait, 20*time.Millisecond, "the change made after the outage listed")
	require.GreaterOrEqual(t, rv2, last)
	require.NotContains(t, warning, "not been heard")
}

// killAPIServer kills the kube-apiserver in dir and waits until it is gone.
func killAPIServer(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "kube-apiserver.pid"))
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, wait, 100*time.Millisecond, "kube-apiserver did not exit")
}
