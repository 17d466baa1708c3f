// Package e2e tests listwatch against a real kube-apiserver through the
// public API only. Every test is skipped unless the REALAPI_* variables
// that scripts/realapi.sh exports are set:
//
//	eval "$(scripts/realapi.sh start)"
//	go test -race -v ./e2e/
//	scripts/realapi.sh stop "$REALAPI_DIR"
//
// With REALAPI_REQUIRED set (.ci/run sets it once its server is up), a
// missing variable fails the test instead: the suite must not pass by
// skipping. Some tests restart the kube-apiserver with other flags, through
// the files scripts/realapi.sh leaves in REALAPI_DIR, and restore them when
// they end, so tests do not depend on their order.
package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(agentEnv); spec != "" {
		runAgent(spec) // the agent a warm start test kills
	}
	os.Exit(m.Run())
}

const wait = 60 * time.Second

func config(t *testing.T) *kubeconfig.Config {
	t.Helper()
	return &kubeconfig.Config{Host: realapi.Env(t, "REALAPI_URL"), BearerToken: realapi.Env(t, "REALAPI_TOKEN"), CAFile: realapi.Env(t, "REALAPI_CA"), QPS: -1, Timeout: 30 * time.Second}
}

func client(t *testing.T) *httpwatch.Client {
	t.Helper()
	c, err := httpwatch.NewClient(config(t))
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return c
}

var (
	namespaces = httpwatch.Resource{Version: "v1", Resource: "namespaces"}
	configMaps = httpwatch.Resource{Version: "v1", Resource: "configmaps"}
)

// namespace creates a fresh namespace deleted at the end of the test.
func namespace(t *testing.T, c *httpwatch.Client) string {
	t.Helper()
	ns := fmt.Sprintf("e2e-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), rand.Uint32()%100000)
	if len(ns) > 60 {
		ns = ns[len(ns)-60:]
		ns = "e" + strings.TrimLeft(ns, "-0123456789")
	}
	_, err := c.Resource(namespaces).Create(context.Background(), fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ns))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Resource(namespaces).Delete(context.Background(), ns) })
	return ns
}

func configMap(ns, name, value string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"v":%q}}`, name, ns, value)
}

// run starts inf, stops it when the test ends, and waits for its sync.
func run(t *testing.T, inf *listwatch.Informer) {
	t.Helper()
	startInformer(t, inf)
	if err := inf.Wait(ctxTimeout(t, wait)); err != nil {
		t.Fatalf("informer did not sync within %s (last RV %q, stats %+v): %v", wait, inf.LastSyncResourceVersion(), inf.Stats(), err)
	}
}

// failsFast returns inf's Wait error, which must come
// within 2 s: a failure that will not fix itself.
func failsFast(t *testing.T, inf *listwatch.Informer) error {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
	defer stop()
	err := inf.Wait(ctx)
	require.Error(t, err)
	require.NoError(t, ctx.Err(), "the wait returned within 2 s: %v", err)
	return err
}

// serverState lists rc on the server: key → resourceVersion.
func serverState(t *testing.T, rc *httpwatch.ResourceClient) map[string]string {
	t.Helper()
	p, err := rc.List(context.Background(), httpwatch.ListOptions{})
	require.NoError(t, err)
	out := map[string]string{}
	for _, o := range p.Items {
		out[listwatch.Key(o)] = o.ResourceVersion()
	}
	return out
}

func cacheState(inf *listwatch.Informer) map[string]string {
	out := map[string]string{}
	for _, o := range inf.Indexer().List() {
		out[listwatch.Key(o)] = o.ResourceVersion()
	}
	return out
}

// converges waits until the informer's cache equals the server's list.
func converges(t *testing.T, inf *listwatch.Informer, rc *httpwatch.ResourceClient) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		want, got := serverState(t, rc), cacheState(inf)
		last = fmt.Sprintf("server %d objects, cache %d", len(want), len(got))
		if len(want) != len(got) {
			return false
		}
		for k, v := range want {
			if got[k] != v {
				last = fmt.Sprintf("%s: server %s, cache %s", k, v, got[k])
				return false
			}
		}
		return true
	}, wait, 50*time.Millisecond, "cache never equalled the server: %s", func() string { return last }())
}

// ready waits for the server's /readyz.
func ready(t *testing.T, cfg *kubeconfig.Config) {
	t.Helper()
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	hc := &http.Client{Transport: rt, Timeout: 2 * time.Second}
	require.Eventually(t, func() bool {
		resp, err := hc.Get(cfg.Host + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 2*wait, 200*time.Millisecond, "kube-apiserver did not become ready")
}
