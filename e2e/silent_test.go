package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// readOnlyConfigMaps grants the user "nobody" get, list and watch on
// configmaps in ns, and nothing else, and waits until RBAC lets it list.
func readOnlyConfigMaps(t *testing.T, admin *httpwatch.Client, ns string) *httpwatch.Client {
	t.Helper()
	ctx := context.Background()
	rbac := func(res string) *httpwatch.ResourceClient {
		return admin.Resource(httpwatch.Resource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: res, Namespace: ns})
	}
	_, err := rbac("roles").Create(ctx, []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"Role","metadata":{"name":"read-configmaps"},
		"rules":[{"apiGroups":[""],"resources":["configmaps"],"verbs":["get","list","watch"]}]}`))
	require.NoError(t, err)
	_, err = rbac("rolebindings").Create(ctx, []byte(`{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"RoleBinding","metadata":{"name":"nobody-reads"},
		"subjects":[{"kind":"User","name":"nobody","apiGroup":"rbac.authorization.k8s.io"}],
		"roleRef":{"kind":"Role","name":"read-configmaps","apiGroup":"rbac.authorization.k8s.io"}}`))
	require.NoError(t, err)
	cfg := config(t)
	cfg.BearerToken = realapi.Env(t, "REALAPI_TOKEN_NOBODY")
	c, err := httpwatch.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	cms := c.Resource(configMaps).Namespace(ns)
	require.Eventually(t, func() bool {
		_, err := cms.List(ctx, httpwatch.ListOptions{})
		return err == nil
	}, wait, 50*time.Millisecond, "RBAC to let nobody list configmaps")
	return c
}

// decision 20: a controller that may read configmaps but not patch them
// says so in one Error line within 2 s of its caches syncing, naming the
// verb and the resource to grant and where; its retries add no line.
func TestRunnerWithoutPatchRightsIsOneErrorLine(t *testing.T) {
	reconfigureAPIServer(t, map[string]string{"--authorization-mode": "RBAC"})
	admin := client(t)
	ns := namespace(t, admin)
	_, err := admin.Resource(configMaps).Create(context.Background(), configMap(ns, "web", "1"))
	require.NoError(t, err)
	cms := readOnlyConfigMaps(t, admin, ns).Resource(configMaps).Namespace(ns)

	inf := listwatch.NewInformer(cms, 0)
	inf.Logger = slog.New(slog.DiscardHandler)
	r := reconcile.New(inf, func(ctx context.Context, key string) (reconcile.Result, error) {
		_, name, _ := strings.Cut(key, "/")
		_, err := cms.Patch(ctx, name, httpwatch.MergePatch, []byte(`{"data":{"seen":"yes"}}`))
		return reconcile.Result{}, err
	})
	logger, log := testlog.NewLogger()
	r.Logger = logger
	failures := make(chan error, 100)
	r.OnError = func(_ string, err error) {
		select {
		case failures <- err:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() { cancel(); testwait.RecvWithin(t, done, wait, "Run to return after cancel") })
	require.NoError(t, inf.Wait(ctxTimeout(t, wait)), "the runner's informer did not sync")

	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelError)) > 0 }, 2*time.Second, 10*time.Millisecond,
		"an Error line within 2 s")
	for range 3 { // retries: 5, 10, 20 ms...
		select {
		case err := <-failures:
			assert.True(t, httpwatch.IsForbidden(err), "%v", err)
		case <-time.After(wait):
			t.Fatal("no retry")
		}
	}
	lines := log.Lines(slog.LevelWarn)
	require.Len(t, lines, 1, "%v", lines)
	for _, want := range []string{"verb=patch", "resource=configmaps", "code=403", `cannot patch resource "configmaps"`,
		"hint=check RBAC: grant patch on configmaps in namespace " + ns} {
		assert.Contains(t, lines[0].Text, want)
	}
}

// decision 20, decision 21: a client given the wrong CA is refused by the
// real server's certificate at once: one Error line, and
// Wait returns within 2 s instead of retrying for ever.
func TestWrongCAFailsFastOnRealServer(t *testing.T) {
	cfg := config(t)
	cfg.CAFile, cfg.CAData = "", otherCA(t)
	c, err := httpwatch.NewClient(cfg)
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	inf := listwatch.NewInformer(c.Resource(configMaps), 0)
	inf.Reflector.Name = "configmaps"
	inf.Reflector.Backoff = reflector.Backoff{Initial: 10 * time.Millisecond, Cap: 20 * time.Millisecond}
	logger, log := testlog.NewLogger()
	inf.Logger = logger
	startInformer(t, inf)
	err = failsFast(t, inf)
	assert.True(t, httpwatch.IsPermanent(err), "%v", err)
	assert.Contains(t, err.Error(), "not signed by that CA")
	lines := log.Lines(slog.LevelWarn)
	require.NotEmpty(t, lines)
	assert.Equal(t, slog.LevelError, lines[0].Level, lines[0].Text)
	assert.Contains(t, lines[0].Text, "hint=check the CA")
}

// otherCA is the PEM of a CA that signed nothing the server holds.
func otherCA(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "some-other-ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}
