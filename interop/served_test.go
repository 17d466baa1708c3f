package interop

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/cacheserve"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// versions records, key by key, the versions a client-go informer's
// handler was given by adds and updates, in order.
type versions struct {
	mu   sync.Mutex
	seen map[string][]string
}

func (v *versions) record(obj any) {
	o, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.seen[o.GetName()] = append(v.seen[o.GetName()], o.GetResourceVersion())
}

func (v *versions) handler() cache.ResourceEventHandlerFuncs {
	return cache.ResourceEventHandlerFuncs{AddFunc: v.record, UpdateFunc: func(_, o any) { v.record(o) }}
}

func (v *versions) perKey() map[string][]string {
	v.mu.Lock()
	defer v.mu.Unlock()
	out := map[string][]string{}
	for k, vs := range v.seen {
		out[k] = slices.Clone(vs)
	}
	return out
}

// backwards lists the versions a key was given twice or after a newer one.
func (v *versions) backwards() []string {
	var out []string
	for k, vs := range v.perKey() {
		for i := 1; i < len(vs); i++ {
			a, _ := strconv.ParseUint(vs[i-1], 10, 64)
			b, _ := strconv.ParseUint(vs[i], 10, 64)
			if b <= a {
				out = append(out, fmt.Sprintf("%s: %s after %s", k, vs[i], vs[i-1]))
			}
		}
	}
	return out
}

// serveConfigMaps serves ns's configmaps of the real server from a
// cacheserve.Server on a loopback port until the test ends, and returns
// its URL once its informer has synced, and a function that closes its
// client's idle connections.
func serveConfigMaps(t *testing.T, host, token, ca, ns string) (string, func()) {
	t.Helper()
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: host, BearerToken: token, CAFile: ca, QPS: -1, Timeout: 30 * time.Second})
	require.NoError(t, err)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	rc.KeepManagedFields = true // whole objects, as kube-apiserver sends them
	inf := listwatch.NewInformer(rc, 0)
	srv := &cacheserve.Server{Authorize: func(req *http.Request) error {
		if host, _, err := net.SplitHostPort(req.RemoteAddr); err == nil && net.ParseIP(host).IsLoopback() {
			return nil
		}
		return errors.New("loopback only")
	}}
	_, err = srv.Add(inf, rc, apiserve.APIResource{})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran, served := make(chan struct{}), make(chan error, 1)
	go func() { defer close(ran); inf.Run(ctx) }()
	go func() { served <- srv.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		testwait.RecvWithin(t, served, wait, "the served cache's Serve to return")
		testwait.RecvWithin(t, ran, wait, "the served cache's informer to stop")
		c.CloseIdleConnections()
	})
	wctx, wcancel := context.WithTimeout(ctx, wait)
	defer wcancel()
	require.NoError(t, inf.Wait(wctx), "the served cache did not sync")
	return "http://" + l.Addr().String(), c.CloseIdleConnections
}

// startTraced starts a client-go dynamic informer of ns's configmaps on
// cfg with a versions handler, and waits for its sync.
func startTraced(t *testing.T, cfg *rest.Config, ns string) (cache.SharedIndexInformer, *versions) {
	t.Helper()
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamicClient(t, cfg), 0, ns, nil)
	inf := factory.ForResource(configMaps).Informer()
	v := &versions{seen: map[string][]string{}}
	_, err := inf.AddEventHandler(v.handler())
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	factory.Start(ctx.Done())
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	sctx, scancel := context.WithTimeout(ctx, wait)
	defer scancel()
	require.True(t, waitSynced(sctx, inf.HasSynced), "client-go's informer did not sync on %s", cfg.Host)
	return inf, v
}

// Decision 43: a client-go dynamic informer on a served cache of
// kube-apiserver and one on kube-apiserver itself, through the same
// writes, start with the same objects, are handed every version of every
// object in the same order, none twice or backwards, and end with the
// real server's list.
func TestClientGoInformerOnServedCacheMatchesRealServer(t *testing.T) {
	host, token, ca := realapi.Env(t, "REALAPI_URL"), realapi.Env(t, "REALAPI_TOKEN"), realapi.Env(t, "REALAPI_CA")
	realCfg := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: ca}}
	// A connection a stopped watch leaves may turn idle after the
	// cleanups that stopped it closed the idle ones: close them again,
	// after every other cleanup, for goleak.
	var lastly []func()
	t.Cleanup(func() {
		for _, f := range lastly {
			f()
		}
	})
	hc, err := rest.HTTPClientFor(realCfg) // client-go shares one transport per config
	require.NoError(t, err)
	lastly = append(lastly, func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	ns := fmt.Sprintf("interop-served-%d", rand.Uint32()%100000)
	dc := dynamicClient(t, realCfg)
	nsRes := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	_, err = nsRes.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	defer func() { _ = nsRes.Delete(context.Background(), ns, metav1.DeleteOptions{}) }()
	cms := dc.Resource(configMaps).Namespace(ns)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	put := func(name, v string) {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"v": v}}}
		_, err := cms.Create(ctx, o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	for i := range 5 {
		put(fmt.Sprintf("c%d", i), "0")
	}
	servedURL, closeIdle := serveConfigMaps(t, host, token, ca, ns)
	lastly = append(lastly, closeIdle)
	realInf, realSeen := startTraced(t, realCfg, ns)
	servedInf, servedSeen := startTraced(t, &rest.Config{Host: servedURL}, ns)
	// The served cache may not have heard the last create when it synced.
	require.Eventually(t, func() bool { return maps.EqualFunc(realSeen.perKey(), servedSeen.perKey(), slices.Equal) },
		wait, 10*time.Millisecond, "the same objects at sync")

	for i := 1; i <= 30; i++ {
		name := fmt.Sprintf("c%d", i%5)
		_, err := cms.Patch(ctx, name, "application/merge-patch+json", fmt.Appendf(nil, `{"data":{"v":"%d"}}`, i), metav1.PatchOptions{})
		require.NoError(t, err)
		if i%10 == 0 {
			require.NoError(t, cms.Delete(ctx, name, metav1.DeleteOptions{}))
			put(name, "again")
		}
	}
	list, err := cms.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	want := map[string]string{}
	for _, o := range list.Items {
		want[o.GetName()] = o.GetResourceVersion()
	}
	store := func(inf cache.SharedIndexInformer) map[string]string {
		out := map[string]string{}
		for _, x := range inf.GetStore().List() {
			o := x.(*unstructured.Unstructured)
			out[o.GetName()] = o.GetResourceVersion()
		}
		return out
	}
	var last string
	ok := assert.Eventually(t, func() bool {
		last = fmt.Sprintf("list %v\nreal %v\nserved %v\nreal handler %v\nserved handler %v",
			want, store(realInf), store(servedInf), realSeen.perKey(), servedSeen.perKey())
		return maps.Equal(want, store(realInf)) && maps.Equal(want, store(servedInf)) &&
			maps.EqualFunc(realSeen.perKey(), servedSeen.perKey(), slices.Equal)
	}, wait, 10*time.Millisecond)
	require.True(t, ok, "both caches end as the list, their handlers given the same versions:\n%s", last)
	require.Empty(t, realSeen.backwards(), "kube-apiserver's informer")
	require.Empty(t, servedSeen.backwards(), "the served cache's informer")
}
