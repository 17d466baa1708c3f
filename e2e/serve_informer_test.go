package e2e

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
)

// handlerTrace records the versions an informer's handler calls
// delivered, key by key, in order.
type handlerTrace struct {
	mu   sync.Mutex
	seen map[string][]string // key → the versions add and update delivered
}

func newHandlerTrace() *handlerTrace { return &handlerTrace{seen: map[string][]string{}} }

func (h *handlerTrace) record(op string, o *listwatch.Object) {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := listwatch.Key(o)
	if op != "delete" {
		h.seen[k] = append(h.seen[k], o.ResourceVersion())
	}
}

func (h *handlerTrace) OnAdd(o *listwatch.Object, _ bool) { h.record("add", o) }
func (h *handlerTrace) OnUpdate(_, o *listwatch.Object)   { h.record("update", o) }
func (h *handlerTrace) OnDelete(o *listwatch.Object, _ bool) {
	h.record("delete", o)
}

// perKey is each key's versions, as add and update delivered them.
func (h *handlerTrace) perKey() map[string][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string][]string{}
	for k, v := range h.seen {
		out[k] = slices.Clone(v)
	}
	return out
}

// problems lists versions a key was delivered twice or that went back.
func (h *handlerTrace) problems() []string {
	var out []string
	for k, vs := range h.perKey() {
		for i := 1; i < len(vs); i++ {
			a, _ := strconv.ParseUint(vs[i-1], 10, 64)
			b, _ := strconv.ParseUint(vs[i], 10, 64)
			if b <= a {
				out = append(out, fmt.Sprintf("%s: %s after %s", k, vs[i], vs[i-1]))
			}
		}
	}
	slices.Sort(out)
	return out
}

// tracedInformer runs an informer of rc with a handlerTrace, until the
// test ends, and waits for its sync.
func tracedInformer(t *testing.T, name string, rc *httpwatch.ResourceClient) (*listwatch.Informer, *handlerTrace) {
	t.Helper()
	inf := listwatch.NewInformer(rc, 0)
	inf.Reflector.Name = name
	h := newHandlerTrace()
	_, err := inf.AddEventHandler(h)
	require.NoError(t, err)
	run(t, inf)
	return inf, h
}

// servedWriter makes n changes to ns's configmaps on the real server:
// patches in turn, and every fifth change deletes one and creates one.
func servedWriter(t *testing.T, c *httpwatch.Client, ns string, n int) {
	t.Helper()
	ctx := ctxTimeout(t, wait)
	cms := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	names := []string{"c1", "c2", "c3", "c4", "c5", "c6"}
	for i := 1; i <= n; i++ {
		j := i % len(names)
		if i%5 == 0 {
			require.NoError(t, cms.Delete(ctx, names[j]))
			names[j] = fmt.Sprintf("w%d", i)
			_, err := cms.Create(ctx, configMap(ns, names[j], "new"))
			require.NoError(t, err)
			continue
		}
		_, err := cms.Patch(ctx, names[j], httpwatch.MergePatch, fmt.Appendf(nil, `{"data":{"v":"%d"}}`, i))
		require.NoError(t, err)
	}
}

// Decision 43: a listwatch informer on the served cache and one on
// kube-apiserver, through the same writes, start with the same objects,
// hear every version of every object in the same order, never one twice
// or backwards, and end with the real server's list.
func TestServedCacheInformerMatchesRealServer(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	fillServed(t, c, ns)
	sc := serveNamespace(t, c, ns)
	sc.caughtUp(t, c, ns)
	realRC := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	servedRC := sc.client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	realInf, realTrace := tracedInformer(t, "on kube-apiserver", realRC)
	servedInf, servedTrace := tracedInformer(t, "on the served cache", servedRC)
	// Wait returns once the cache is synced; its handler hears the adds
	// a moment later, on the processor's goroutine.
	require.Eventually(t, func() bool {
		real := realTrace.perKey()
		return len(real) == realInf.Stats().Objects && maps.EqualFunc(real, servedTrace.perKey(), slices.Equal)
	}, wait, 10*time.Millisecond, "the same objects at sync")

	servedWriter(t, c, ns, 40)
	converges(t, realInf, realRC)
	converges(t, servedInf, realRC)
	// The last version of each object reached both handlers too.
	require.Eventually(t, func() bool {
		return maps.EqualFunc(realTrace.perKey(), servedTrace.perKey(), slices.Equal)
	}, wait, 10*time.Millisecond, "the handlers heard different versions")
	want := serverState(t, realRC)
	for k, v := range want {
		vs := servedTrace.perKey()[k]
		require.Equal(t, v, vs[len(vs)-1], "%s: the last version the served cache's informer heard", k)
	}
	require.Empty(t, realTrace.problems(), "kube-apiserver's informer")
	require.Empty(t, servedTrace.problems(), "the served cache's informer")
	t.Logf("every version of %d objects heard in order by both informers", len(servedTrace.perKey()))
}
