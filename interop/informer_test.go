package interop

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/testkit/realapi"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run"),
		// An HTTP/2 connection to the real server whose last watch stream
		// was still closing when a test closed the idle ones lives on
		// until its idle timeout: client-go's (x/net/http2) keeps one
		// transport per config for the process, and the served cache's
		// upstream client (net/http's own HTTP/2) ends its watches as
		// its informer stops. A pooled connection, not a goroutine that
		// runs; the library's packages check their own leaks strictly.
		goleak.IgnoreAnyFunction("golang.org/x/net/http2.(*ClientConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*http2ClientConn).readLoop"))
}

const wait = 60 * time.Second

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// faults are what a scenario does to its server between writes; nil on
// the real server, which is not told to misbehave.
type faults struct {
	cut     func() // the next watch is cut after one event
	expire  func() // history is compacted and every watch ends: a 410 on resuming
	waitFor func(ctx context.Context, n int) error
}

// scenario writes to a namespace through client-go while a client-go
// dynamic informer watches it, and returns what the informer's cache and
// a list of the server hold at the end: name → data.
func scenario(t *testing.T, cfg *rest.Config, ns string, f *faults) (cache, server map[string]string) {
	t.Helper()
	dc := dynamicClient(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, ns, nil)
	inf := factory.ForResource(configMaps).Informer()
	factory.Start(ctx.Done())
	defer func() { cancel(); factory.Shutdown() }()
	sctx, scancel := context.WithTimeout(ctx, wait)
	defer scancel()
	require.True(t, waitSynced(sctx, inf.HasSynced))

	cms := dc.Resource(configMaps).Namespace(ns)
	put := func(name, v string) {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}, "data": map[string]any{"v": v}}}
		if cur, err := cms.Get(ctx, name, metav1.GetOptions{}); err == nil {
			o.SetResourceVersion(cur.GetResourceVersion())
			_, err = cms.Update(ctx, o, metav1.UpdateOptions{})
			require.NoError(t, err)
			return
		}
		_, err := cms.Create(ctx, o, metav1.CreateOptions{})
		require.NoError(t, err)
	}
	listed := func() map[string]string {
		l, err := cms.List(ctx, metav1.ListOptions{})
		require.NoError(t, err)
		out := map[string]string{}
		for _, o := range l.Items {
			out[o.GetName()] = o.GetResourceVersion() + "/" + fmt.Sprint(o.Object["data"])
		}
		return out
	}
	cached := func() map[string]string {
		out := map[string]string{}
		for _, x := range inf.GetStore().List() {
			o := x.(*unstructured.Unstructured)
			out[o.GetName()] = o.GetResourceVersion() + "/" + fmt.Sprint(o.Object["data"])
		}
		return out
	}
	caughtUp := func(phase string) {
		t.Helper()
		require.Eventually(t, func() bool { return fmt.Sprint(cached()) == fmt.Sprint(listed()) }, wait, 10*time.Millisecond,
			"%s: the cache never caught up with the server", phase)
	}

	for i := range 5 {
		put(fmt.Sprintf("c%d", i), "1")
	}
	caughtUp("creates")
	if f != nil {
		f.cut()
	}
	put("c0", "2")
	put("c1", "2")
	caughtUp("a watch cut after one event")
	if f != nil {
		f.expire()
		wctx, wcancel := context.WithTimeout(ctx, wait)
		require.NoError(t, f.waitFor(wctx, 1), "the informer watches again after the 410")
		wcancel()
	}
	require.NoError(t, cms.Delete(ctx, "c2", metav1.DeleteOptions{}))
	put("c3", "3")
	put("c5", "1")
	caughtUp("after compaction and a 410")
	return strip(cached()), strip(listed())
}

// strip drops the resourceVersions, which differ between servers.
func strip(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		_, data, _ := strings.Cut(v, "/")
		out[k] = data
	}
	return out
}

// dynamicClient is a dynamic client whose connections are closed when
// the test ends.
func dynamicClient(t *testing.T, cfg *rest.Config) *dynamic.DynamicClient {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	require.NoError(t, err)
	// client-go's round trippers wrap the transport without passing
	// CloseIdleConnections on; this reaches it.
	t.Cleanup(func() { utilnet.CloseIdleConnectionsFor(hc.Transport) })
	dc, err := dynamic.NewForConfigAndClient(cfg, hc)
	require.NoError(t, err)
	return dc
}

func waitSynced(ctx context.Context, synced func() bool) bool {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !synced() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// Decision 40: a client-go dynamic informer on watchtest, through a cut
// watch, a compaction and the 410 that follows, ends with the cache it
// ends with on kube-apiserver after the same writes, and each cache is
// its server's list.
func TestClientGoInformerOnWatchtestEndsAsOnRealServer(t *testing.T) {
	host, token, ca := realapi.Env(t, "REALAPI_URL"), realapi.Env(t, "REALAPI_TOKEN"), realapi.Env(t, "REALAPI_CA")
	realCfg := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAFile: ca}}
	ns := fmt.Sprintf("interop-%d", rand.Uint32()%100000)
	dc := dynamicClient(t, realCfg)
	nsRes := dc.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	_, err := nsRes.Create(context.Background(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}, metav1.CreateOptions{})
	require.NoError(t, err)
	defer func() { _ = nsRes.Delete(context.Background(), ns, metav1.DeleteOptions{}) }()
	realCache, realList := scenario(t, realCfg, ns, nil)

	s := watchtest.NewServer()
	defer s.Close()
	f := &faults{
		cut: func() { s.CutNextWatchAfterEvents(1) },
		expire: func() {
			// History is compacted and every watch ends; the informer's
			// next watch gets the 410 a compacted server sends in the
			// stream, whether or not it resumes before the compaction.
			s.FailNext(watchtest.Failure{Code: http.StatusGone, Verbs: []string{"watch"}, InStream: true})
			require.NoError(t, s.Compact(s.ResourceVersion()))
			s.CloseWatches()
		},
		waitFor: s.WaitForWatches,
	}
	fakeCache, fakeList := scenario(t, &rest.Config{Host: s.URL}, ns, f)

	require.Equal(t, realList, realCache, "kube-apiserver: the cache is the list")
	require.Equal(t, fakeList, fakeCache, "watchtest: the cache is the list")
	require.Equal(t, realCache, fakeCache, "the same cache on both servers")
	// The faults happened: the informer listed (client-go 1.37 lists as
	// a streaming list) at the start and again after the 410, and watched
	// from a resourceVersion besides.
	lists, watches := 0, 0
	for _, r := range s.Requests() {
		switch {
		case r.Verb == "list" && r.Query.Get("limit") != "", r.Verb == "watch" && r.Query.Get("sendInitialEvents") == "true":
			lists++ // client-go lists with a limit, or as a streaming list
		case r.Verb == "watch":
			watches++
		}
	}
	require.GreaterOrEqual(t, lists, 2, "the informer relisted after the 410")
	require.GreaterOrEqual(t, watches, 1)
	keys := make([]string, 0, len(fakeCache))
	for k := range fakeCache {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	require.Equal(t, []string{"c0", "c1", "c3", "c4", "c5"}, keys)
}
