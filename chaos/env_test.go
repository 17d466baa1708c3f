package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The toxiproxy client speaks through http.DefaultTransport, and its
	// DELETE of a toxic on a kept-alive connection the control server had
	// dropped failed with "connection reset by peer" (DELETE is not
	// retried by net/http), leaving the fault in place for every later
	// case. A fresh connection per control call cannot be stale.
	http.DefaultTransport.(*http.Transport).DisableKeepAlives = true
	// The restarted kube-apiserver outlives the tests, reaped by its waiter.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("os/exec.(*Cmd).Wait"))
}

// The bounds of the client behind the proxy, shorter than the defaults so
// that the suite fits in CI, each still one a user could choose.
const (
	pingAfter      = 2 * time.Second  // default 10 s
	pingTimeout    = 3 * time.Second  // default 15 s
	requestTimeout = 10 * time.Second // Config.Timeout, default 1 min
	leaseDuration  = 6 * time.Second  // default 15 s
	renewDeadline  = 4 * time.Second  // default 10 s
	retryPeriod    = time.Second      // default 2 s
	// leaderGrace: leadership returns or moves within leaseDuration +
	// leaderGrace after the connection went silent.
	leaderGrace = 30 * time.Second
	// wait bounds every other wait of the suite.
	wait = 60 * time.Second
)

var (
	namespaces = httpwatch.Resource{Version: "v1", Resource: "namespaces"}
	configMaps = httpwatch.Resource{Version: "v1", Resource: "configmaps"}
	leases     = httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// env is the server, the proxy in front of it and a client on each path.
type env struct {
	cfg     *kubeconfig.Config // the direct path's
	direct  *httpwatch.Client  // the writer's and the judge's: straight to the server
	proxied *httpwatch.Client  // the informer's, leader's and shard member's: through the proxy
	proxy   *toxiproxy.Proxy
	log     *capture // everything the proxied side logs
	logger  *slog.Logger
	dir     string // REALAPI_DIR: how to restart the server
	ns      string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	host := realapi.Env(t, "REALAPI_URL")
	e := &env{dir: realapi.Env(t, "REALAPI_DIR")}
	e.cfg = &kubeconfig.Config{Host: host, BearerToken: realapi.Env(t, "REALAPI_TOKEN"), CAFile: realapi.Env(t, "REALAPI_CA"), QPS: -1, Timeout: 30 * time.Second}
	var err error
	e.direct, err = httpwatch.NewClient(e.cfg)
	require.NoError(t, err)
	e.direct.Logger = slog.New(slog.DiscardHandler)
	t.Cleanup(e.direct.CloseIdleConnections)

	u, err := url.Parse(host)
	require.NoError(t, err)
	toxi := toxiproxy.NewClient(realapi.Env(t, "REALAPI_TOXIPROXY"))
	e.proxy, err = toxi.CreateProxy(fmt.Sprintf("chaos-%d", rand.Uint32()), "127.0.0.1:0", u.Host)
	require.NoError(t, err, "create the toxiproxy proxy")
	t.Cleanup(func() { _ = e.proxy.Delete() })

	// The server's certificate names 127.0.0.1, which the proxy listens on
	// too: TLS passes through the proxy untouched.
	pcfg := *e.cfg
	pcfg.Host = "https://" + e.proxy.Listen
	pcfg.PingAfter, pcfg.PingTimeout, pcfg.Timeout = pingAfter, pingTimeout, requestTimeout
	e.proxied, err = httpwatch.NewClient(&pcfg)
	require.NoError(t, err)
	e.logger, e.log = newCapture()
	e.proxied.Logger = e.logger
	t.Cleanup(e.proxied.CloseIdleConnections)

	e.ns = fmt.Sprintf("chaos-%d", rand.Uint32()%100000)
	ns := e.direct.Resource(namespaces)
	_, err = ns.Create(context.Background(), fmt.Appendf(nil, `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, e.ns))
	require.NoError(t, err)
	t.Cleanup(func() { _ = ns.Delete(context.Background(), e.ns) })
	return e
}

func (e *env) resource(c *httpwatch.Client, r httpwatch.Resource) *httpwatch.ResourceClient {
	r.Namespace = e.ns
	return c.Resource(r)
}

// toxic is one toxiproxy toxic, on the stream from the server to the
// client (downstream) or the other way (upstream).
type toxic struct {
	typ, stream string
	attrs       toxiproxy.Attributes
}

func (e *env) addToxics(t *testing.T, toxics []toxic) {
	t.Helper()
	for i, x := range toxics {
		_, err := e.proxy.AddToxic(fmt.Sprintf("%s-%s-%d", x.typ, x.stream, i), x.typ, x.stream, 1, x.attrs)
		require.NoError(t, err, "add toxic %s", x.typ)
	}
}

func (e *env) removeToxics(t *testing.T, toxics []toxic) {
	t.Helper()
	for i, x := range toxics {
		require.NoError(t, e.proxy.RemoveToxic(fmt.Sprintf("%s-%s-%d", x.typ, x.stream, i)), "remove toxic %s", x.typ)
	}
}

// ready waits for the server's /readyz on the direct path.
func (e *env) ready(t *testing.T, within time.Duration) {
	t.Helper()
	rt, err := e.cfg.RoundTripper()
	require.NoError(t, err)
	hc := &http.Client{Transport: rt, Timeout: 2 * time.Second}
	defer hc.CloseIdleConnections()
	require.Eventually(t, func() bool {
		resp, err := hc.Get(e.cfg.Host + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, within, 200*time.Millisecond, "kube-apiserver did not become ready within %s", within)
}
