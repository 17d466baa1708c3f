package e2e

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// events records notifications per key, to check none is lost or doubled.
type events struct {
	mu   sync.Mutex
	log  []string
	view map[string]string
	back []string // resourceVersions that went backwards
}

func newEvents() *events { return &events{view: map[string]string{}} }

func (e *events) note(kind string, o *listwatch.Object) {
	e.mu.Lock()
	defer e.mu.Unlock()
	key := listwatch.Key(o)
	if old, ok := e.view[key]; ok && kind != "delete" && rvLess(o.ResourceVersion(), old) {
		e.back = append(e.back, key)
	}
	if kind == "delete" {
		delete(e.view, key)
	} else {
		e.view[key] = o.ResourceVersion()
	}
	e.log = append(e.log, kind+" "+key)
}

func rvLess(a, b string) bool {
	var x, y uint64
	fmt.Sscan(a, &x)
	fmt.Sscan(b, &y)
	return x < y
}

func (e *events) OnAdd(o *listwatch.Object, _ bool)    { e.note("add", o) }
func (e *events) OnUpdate(_, o *listwatch.Object)      { e.note("update", o) }
func (e *events) OnDelete(o *listwatch.Object, _ bool) { e.note("delete", o) }
func (e *events) lines() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.log...)
}
func (e *events) state() map[string]string { e.mu.Lock(); defer e.mu.Unlock(); return clone(e.view) }
func clone(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestCRUDAndWatch(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	ctx := context.Background()

	for _, watchList := range []bool{true, false} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			_, err := rc.Create(ctx, configMap(ns, fmt.Sprintf("before-%v", watchList), "1"))
			require.NoError(t, err)
			inf := listwatch.NewInformer(rc, 0)
			inf.Reflector.PagedList = !watchList
			ev := newEvents()
			reg, err := inf.AddEventHandler(ev)
			require.NoError(t, err)
			run(t, inf)
			require.Eventually(t, reg.HasSynced, wait, 10*time.Millisecond)
			// A paged list at resourceVersion "0" is served from the watch
			// cache, which may not hold the object created a moment ago yet:
			// it then arrives as an ADDED event after the sync.
			require.Eventually(t, func() bool {
				return slices.Contains(ev.lines(), fmt.Sprintf("add %s/before-%v", ns, watchList))
			}, wait, 10*time.Millisecond)
			if watchList {
				assert.Zero(t, inf.Stats().ListPages, "synced through a watch-list stream")
			} else {
				assert.Positive(t, inf.Stats().ListPages, "synced through a paged list")
			}

			name := fmt.Sprintf("cm-%v", watchList)
			created, err := rc.Create(ctx, configMap(ns, name, "a"))
			require.NoError(t, err)
			require.Eventually(t, func() bool { _, err := inf.Lister().Get(ns, name); return err == nil }, wait, 10*time.Millisecond)

			updated, err := rc.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"resourceVersion":%q},"data":{"v":"b"}}`,
				name, ns, created.ResourceVersion()))
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				o, err := inf.Lister().Get(ns, name)
				return err == nil && o.ResourceVersion() == updated.ResourceVersion() && o.Get("data.v").String() == "b"
			}, wait, 10*time.Millisecond)

			require.NoError(t, rc.Delete(ctx, name))
			require.Eventually(t, func() bool { _, err := inf.Lister().Get(ns, name); return httpwatch.IsNotFound(err) }, wait, 10*time.Millisecond)
			key := ns + "/" + name
			// The cache changes before the handler hears of it: wait for
			// the delete notification, then check the whole sequence.
			require.Eventually(t, func() bool { return len(filter(ev.lines(), key)) >= 3 }, wait, 10*time.Millisecond)
			assert.Equal(t, []string{"add " + key, "update " + key, "delete " + key}, filter(ev.lines(), key))
			assert.False(t, inf.Indexer().List()[0].Get("metadata.managedFields").Exists(), "managedFields are dropped by default")
			converges(t, inf, rc)
		})
	}
}

func filter(lines []string, key string) []string {
	var out []string
	for _, l := range lines {
		if len(l) > len(key) && l[len(l)-len(key):] == key {
			out = append(out, l)
		}
	}
	return out
}

func TestPaginationOver1200Objects(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 1200)
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 1200; i += 8 {
				if _, err := rc.Create(ctx, configMap(ns, fmt.Sprintf("cm-%04d", i), "x")); err != nil {
					errs <- err
				}
			}
		})
	}
	testwait.GroupWithin(t, &wg, wait, "the 1200 creates")
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	// kube-root-ca.crt is created in every namespace by a controller that
	// does not run here, so the namespace holds exactly our objects.
	pages := 0
	all, err := httpwatch.ListAll(ctx, rc, httpwatch.ListOptions{Limit: 500}, func(*httpwatch.Page) { pages++ })
	require.NoError(t, err)
	assert.Len(t, all.Items, 1200, "ListAll follows continue to the end")
	assert.Equal(t, 3, pages, "1200 objects in pages of 500 from etcd")

	// The reflector's first list reads resourceVersion 0, which the watch
	// cache answers in one piece whatever the limit (conformance 15, docs/behaviour.md).
	inf := listwatch.NewInformer(rc, 0)
	inf.Reflector.PagedList = true
	run(t, inf)
	assert.Len(t, inf.Indexer().ListKeys(), 1200)
	converges(t, inf, rc)
}

func TestCustomResourceOnTheFly(t *testing.T) {
	c := client(t)
	ctx := context.Background()
	crds := c.Resource(httpwatch.Resource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	suffix := fmt.Sprint(time.Now().UnixNano() % 100000)
	group := "e2e" + suffix + ".example.com"
	_, err := crds.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.%s"},
"spec":{"group":%q,"scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`, group, group))
	require.NoError(t, err)
	t.Cleanup(func() { _ = crds.Delete(context.Background(), "widgets."+group) })
	require.Eventually(t, func() bool {
		o, err := crds.Get(ctx, "widgets."+group)
		return err == nil && o.Get(`status.conditions.#(type=="Established").status`).String() == "True"
	}, wait, 100*time.Millisecond)

	ns := namespace(t, c)
	widgets := c.Resource(httpwatch.Resource{Group: group, Version: "v1", Resource: "widgets", Namespace: ns})
	f := listwatch.NewFactory(c)
	f.Namespace = ns
	inf := f.ForResource(httpwatch.Resource{Group: group, Version: "v1", Resource: "widgets"})
	cms := f.ForResource(configMaps)
	pods := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "pods"})
	require.Same(t, inf, f.ForResource(httpwatch.Resource{Group: group, Version: "v1", Resource: "widgets"}), "conformance 76: one informer per resource")
	fctx, cancel := context.WithCancel(ctx)
	f.Start(fctx)
	t.Cleanup(func() { cancel(); f.Shutdown() })
	// The CRD's REST endpoint appears a moment after Established; the
	// informer retries until it is served, and Wait says the 404 at once
	// until then (decision 37).
	wctx := ctxTimeout(t, wait)
	require.Eventually(t, func() bool { return f.Wait(wctx) == nil }, wait, 10*time.Millisecond)
	require.True(t, cms.HasSynced())
	require.True(t, pods.HasSynced())
	cmClient := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	_, err = cmClient.Create(ctx, configMap(ns, "follow", "1"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := cms.Lister().Get(ns, "follow"); return err == nil }, wait, 10*time.Millisecond,
		"the factory's configmaps informer follows changes")

	_, err = widgets.Create(ctx, fmt.Appendf(nil, `{"apiVersion":"%s/v1","kind":"Widget","metadata":{"name":"w1","namespace":%q},"spec":{"size":3}}`, group, ns))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		o, err := inf.Lister().Get(ns, "w1")
		return err == nil && o.Get("spec.size").Int() == 3 && o.Kind() == "Widget"
	}, wait, 10*time.Millisecond)
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestMetadataOnly(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	_, err := rc.Create(context.Background(), configMap(ns, "big", "lots of data"))
	require.NoError(t, err)
	meta := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	meta.MetadataOnly = true
	inf := listwatch.NewInformer(meta, 0)
	run(t, inf)
	o, err := inf.Lister().Get(ns, "big")
	require.NoError(t, err)
	assert.False(t, o.Get("data").Exists(), "metadata-only objects carry no data")
	assert.Equal(t, "PartialObjectMetadata", o.Kind())
}
