package listwatch

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func projectedPod(name, app, phase string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":{"app":%q},"annotations":{"big":"..."}},`+
		`"spec":{"nodeName":"node-1","containers":[{"name":"c","image":"i"}]},"status":{"phase":%q,"podIP":"10.0.0.1"}}`, name, app, phase)
}

// decision 5: a Factory's Projection cuts every cached object, on the list
// and on the watch, together with a label selector; handlers see projected
// objects; a relist that brings back the same versions changes nothing.
func TestFactoryProjection(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	var created string // a's first resourceVersion
	for _, p := range []string{projectedPod("a", "web", "Pending"), projectedPod("b", "web", "Running"), projectedPod("c", "db", "Running")} {
		data, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
		if created == "" {
			created = data.ResourceVersion()
		}
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	f := NewFactory(client)
	proj, err := raw.NewProjection("metadata.labels", "spec.nodeName", "status.phase")
	require.NoError(t, err)
	f.Configure = func(_ httpwatch.Resource, inf *Informer) { inf.Reflector.PagedList = true }
	pods := f.ForResource(podsRes, Selector{Label: "app=web", Projection: proj})
	rec := newRecorder()
	_, err = pods.AddEventHandler(rec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer f.Shutdown()
	defer cancel()
	f.Start(ctx)
	require.NoError(t, f.Wait(ctx))

	projected := func(o *Object) string {
		return fmt.Sprintf(`{"kind":"Pod","apiVersion":"v1","metadata":{"name":%q,"namespace":"ns","uid":%q,"resourceVersion":%q,`+
			`"labels":{"app":"web"}},"spec":{"nodeName":"node-1"},"status":{"phase":%q}}`,
			o.Name(), o.UID(), o.ResourceVersion(), o.Get("status.phase").String())
	}
	assert.ElementsMatch(t, []string{"ns/a", "ns/b"}, pods.Indexer().ListKeys(), "the selector applies")
	for _, o := range pods.Indexer().List() {
		assert.JSONEq(t, projected(o), o.String())
	}

	data, err := s.Update(watchtest.Pods, projectedPod("a", "web", "Running"))
	require.NoError(t, err)
	rv := data.ResourceVersion()
	require.Eventually(t, func() bool {
		o, ok, _ := pods.Indexer().GetByKey("ns/a")
		return ok && o.ResourceVersion() == rv
	}, wait, time.Millisecond)
	o, _, _ := pods.Indexer().GetByKey("ns/a")
	assert.JSONEq(t, projected(o), o.String(), "a watched object is cut too")
	assert.Equal(t, "Running", o.Get("status.phase").String())

	pods.Relist()
	require.Eventually(t, func() bool { return pods.Stats().Lists == 2 }, wait, time.Millisecond)
	_, err = s.Create(watchtest.Pods, projectedPod("marker", "web", "Pending"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return slices.Contains(rec.lines(), "add ns/marker initial=false") }, wait, time.Millisecond)
	lines := rec.lines()
	slices.Sort(lines[:2])
	assert.Equal(t, []string{
		"add ns/a initial=true", "add ns/b initial=true",
		"update ns/a " + created + "->" + rv,
		"add ns/marker initial=false",
	}, lines, "the relist of unchanged versions notifies no one")
}
