package listwatch

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// decision 41, conformance 76: an identity is named by what narrows it, and a Factory
// shares one informer per identity: the same selectors give the same
// informer, other selectors or another projection another one.
func TestFactorySharesOneInformerPerIdentity(t *testing.T) {
	r := newWarmRig(t)
	f := NewFactory(r.client)
	proj, err := raw.NewProjection("spec.nodeName", "status.phase")
	require.NoError(t, err)
	node := Selector{Field: "spec.nodeName=n1", Projection: proj}
	a := f.ForResource(podsRes, node)
	proj2, err := raw.NewProjection("spec.nodeName", "status.phase")
	require.NoError(t, err)
	assert.Same(t, a, f.ForResource(podsRes, Selector{Field: "spec.nodeName=n1", Projection: proj2}), "equal selectors, one informer")
	assert.NotSame(t, a, f.ForResource(podsRes, Selector{Field: "spec.nodeName=n1"}), "another projection")
	assert.NotSame(t, a, f.ForResource(podsRes), "no selector")
	assert.NotSame(t, a, f.ForResource(podsRes, Selector{Label: "app=web", Field: "spec.nodeName=n1", Projection: proj}))
	assert.Len(t, f.Informers(), 4)
	assert.Equal(t, "pods.v1 (fields spec.nodeName=n1; projection spec.nodeName,status.phase)", a.Identity().String())
	assert.Equal(t, "pods.v1 in ns (labels app=web)", Identity{Resource: httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns"}, LabelSelector: "app=web"}.String())
	assert.Panics(t, func() { f.ForResource(podsRes, node, node) })
}

// decision 41: two hand-built informers of one identity running through
// one client are told apart: the second is named "#2" in its logs, its
// errors and (Name) its metrics, and says so at Warn; the name is given
// back when it stops. Before, logs named both alike and metrics alone
// said "pods-2".
func TestDuplicateNamesAreToldApart(t *testing.T) {
	r := newWarmRig(t, "a")
	first := NewInformer(r.client.Resource(podsRes), 0)
	second := NewInformer(r.client.Resource(podsRes), 0)
	log := &testlog.Log{}
	second.Logger = slog.New(log)
	run(t, first)
	require.NoError(t, first.Wait(testwait.Context(t)))
	stop := run(t, second)
	require.NoError(t, second.Wait(testwait.Context(t)))
	assert.Equal(t, "pods.v1", first.Name())
	assert.Equal(t, "pods.v1 #2", second.Name())
	lines := log.Above()
	require.Len(t, lines, 1, "%q", lines)
	assert.Contains(t, lines[0], `WARN informer: another running informer has this name`)
	assert.Contains(t, lines[0], "resource=pods.v1 #2 ")
	stop()

	third := NewInformer(r.client.Resource(podsRes), 0)
	run(t, third)
	require.NoError(t, third.Wait(testwait.Context(t)))
	assert.Equal(t, "pods.v1 #2", third.Name(), "the name stopped is free again")
	fourth := NewInformer(r.client.Resource(podsRes), 0)
	fourth.Logger = slog.New(&testlog.Log{})
	run(t, fourth)
	require.NoError(t, fourth.Wait(testwait.Context(t)))
	assert.Equal(t, "pods.v1 #3", fourth.Name(), "the next number free")
}

// decision 41: before it runs, an informer is named by its identity as
// it stands, or by the name its program gave it.
func TestNameBeforeRun(t *testing.T) {
	r := newWarmRig(t)
	inf := NewInformer(r.client.Resource(podsRes), 0)
	assert.Equal(t, "pods.v1", inf.Name())
	inf.Reflector.Name = "mine"
	assert.Equal(t, "mine", inf.Name())
}

// decision 41: a hand-built informer takes what it caches from the one
// Selector it is made with: its lists and watches carry the selectors,
// its objects are cut to the projection, its identity names both; a
// projection on a source that is no *httpwatch.ResourceClient, or two
// selectors, is a programming error.
func TestNewInformerTakesItsSelector(t *testing.T) {
	r := newWarmRig(t)
	for _, p := range []string{
		`{"metadata":{"name":"web","namespace":"ns","labels":{"app":"web"}},"spec":{"nodeName":"n1"},"status":{"phase":"Running"}}`,
		`{"metadata":{"name":"db","namespace":"ns","labels":{"app":"db"}},"spec":{"nodeName":"n1"}}`,
	} {
		_, err := r.s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	proj, err := raw.NewProjection("spec.nodeName")
	require.NoError(t, err)
	sel := Selector{Label: "app=web", Projection: proj}
	inf := NewInformer(r.client.Resource(podsRes), 0, sel)
	assert.Equal(t, "pods.v1 (labels app=web; projection spec.nodeName)", inf.Identity().String())
	stop := run(t, inf)
	defer stop()
	require.NoError(t, inf.Wait(testwait.Context(t)))
	all, err := inf.Lister().List("")
	require.NoError(t, err)
	require.Len(t, all, 1, "only what the label selector lets through")
	assert.Equal(t, "web", all[0].Name())
	assert.Equal(t, "n1", all[0].Get("spec.nodeName").String())
	assert.False(t, all[0].Get("status.phase").Exists(), "cut to the projection")
	for _, rq := range r.s.Requests() {
		assert.Equal(t, "app=web", rq.Query.Get("labelSelector"), "%s %s", rq.Verb, rq.Path)
	}

	wrapped := struct{ httpwatch.ListerWatcher }{r.client.Resource(podsRes)}
	assert.Panics(t, func() { NewInformer(wrapped, 0, sel) }, "a projection needs the client that reads")
	assert.NotPanics(t, func() { NewInformer(wrapped, 0, Selector{Label: "app=web"}) })
	assert.Panics(t, func() { NewInformer(r.client.Resource(podsRes), 0, sel, sel) })
}
