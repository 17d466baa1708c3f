package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A foreground delete only marks the object: the server adds the finalizer
// "foregroundDeletion" and a deletionTimestamp, and the garbage collector
// (which does not run beside the test server) would remove both.
// Removing the finalizer with a patch lets the object go.
func TestForegroundDelete(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	_, err := cms.Create(ctx, configMap(ns, "a", "1"))
	require.NoError(t, err)

	require.NoError(t, cms.Delete(ctx, "a", httpwatch.DeleteOptions{PropagationPolicy: httpwatch.PropagationForeground}))
	o, err := cms.Get(ctx, "a")
	require.NoError(t, err, "the object stays until its finalizer is removed")
	assert.NotEmpty(t, o.Get("metadata.deletionTimestamp").String())
	assert.Equal(t, `["foregroundDeletion"]`, o.Get("metadata.finalizers").Raw)
	require.NoError(t, cms.Delete(ctx, "a", httpwatch.DeleteOptions{PropagationPolicy: httpwatch.PropagationForeground}),
		"deleting an object being deleted succeeds")

	_, err = cms.Patch(ctx, "a", httpwatch.JSONPatch,
		[]byte(`[{"op":"test","path":"/metadata/finalizers/0","value":"foregroundDeletion"},{"op":"remove","path":"/metadata/finalizers/0"}]`))
	require.NoError(t, err)
	_, err = cms.Get(ctx, "a")
	assert.True(t, httpwatch.IsNotFound(err), "%v", err)
}

// Preconditions that do not match the stored object are a 409 Conflict.
func TestDeletePreconditions(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	o, err := cms.Create(ctx, configMap(ns, "a", "1"))
	require.NoError(t, err)

	for _, pre := range []httpwatch.Preconditions{
		{UID: "not-the-uid"},
		{ResourceVersion: "1"},
		{UID: o.UID(), ResourceVersion: "1"},
	} {
		err := cms.Delete(ctx, "a", httpwatch.DeleteOptions{Preconditions: pre})
		require.True(t, httpwatch.IsConflict(err), "%+v: %v", pre, err)
		assert.Contains(t, statusError(t, err).Message, "in the precondition")
	}
	zero := int64(0)
	require.NoError(t, cms.Delete(ctx, "a", httpwatch.DeleteOptions{
		GracePeriodSeconds: &zero,
		PropagationPolicy:  httpwatch.PropagationBackground,
		Preconditions:      httpwatch.Preconditions{UID: o.UID(), ResourceVersion: o.ResourceVersion()},
	}))
	_, err = cms.Get(ctx, "a")
	assert.True(t, httpwatch.IsNotFound(err), "%v", err)
}

// DeleteCollection deletes what the selectors match, and only that.
func TestDeleteCollection(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	for i, tier := range []string{"cache", "cache", "db", "cache"} {
		_, err := cms.Create(ctx, fmt.Appendf(nil, `{"metadata":{"name":"cm-%d","namespace":%q,"labels":{"tier":%q}}}`, i, ns, tier))
		require.NoError(t, err)
	}
	require.NoError(t, cms.DeleteCollection(ctx, httpwatch.ListOptions{LabelSelector: "tier=cache", FieldSelector: "metadata.name!=cm-3"}, httpwatch.DeleteOptions{}))
	left := names(t, cms, "tier")
	assert.Equal(t, []string{"cm-2", "cm-3"}, left)

	require.NoError(t, cms.DeleteCollection(ctx, httpwatch.ListOptions{LabelSelector: "tier"}, httpwatch.DeleteOptions{DryRun: true}))
	assert.Equal(t, left, names(t, cms, "tier"), "a dry run deletes nothing")
}

// names lists the names of the objects that have label key.
func names(t *testing.T, rc *httpwatch.ResourceClient, key string) []string {
	t.Helper()
	p, err := rc.List(context.Background(), httpwatch.ListOptions{LabelSelector: key})
	require.NoError(t, err)
	var out []string
	for _, o := range p.Items {
		out = append(out, o.Name())
	}
	slices.Sort(out)
	return out
}

func deployment(name string, replicas int) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q},"spec":{"replicas":%d,`+
		`"selector":{"matchLabels":{"app":%[1]q}},"template":{"metadata":{"labels":{"app":%[1]q}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`, name, replicas)
}

// The status subresource changes only .status, the object only the rest.
// No controller runs beside the test server, so the status written is the
// only one.
func TestStatusSubresource(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	deps := c.Resource(deployments).Namespace(namespace(t, c))
	_, err := deps.Create(ctx, deployment("web", 1))
	require.NoError(t, err)
	status := deps.Subresource("status")

	got, err := status.Get(ctx, "web")
	require.NoError(t, err)
	assert.Equal(t, "Deployment", got.Get("kind").String())

	raw := setJSON(t, got, map[string]any{"status": map[string]any{"observedGeneration": 1, "replicas": 1, "readyReplicas": 1}, "spec.replicas": 5})
	upd, err := status.Update(ctx, raw, httpwatch.WriteOptions{FieldManager: "reporter"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), upd.Get("status.readyReplicas").Int())
	assert.Equal(t, int64(1), upd.Get("spec.replicas").Int(), "a status update leaves spec alone")

	_, err = status.Update(ctx, raw)
	assert.True(t, httpwatch.IsConflict(err), "the status update is checked against its resourceVersion: %v", err)

	patched, err := status.Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"status":{"conditions":[{"type":"Available","status":"True"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, "True", patched.Get(`status.conditions.#(type=="Available").status`).String())

	applied, err := status.Apply(ctx, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"availableReplicas":1}}`),
		httpwatch.ApplyOptions{FieldManager: "reporter"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), applied.Get("status.availableReplicas").Int())

	obj := setJSON(t, applied, map[string]any{"status": map[string]any{}})
	whole, err := deps.Update(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, int64(1), whole.Get("status.availableReplicas").Int(), "an update of the object leaves status alone")
}

// setJSON decodes o, sets top-level fields (or "a.b" one level down) and
// encodes it again.
func setJSON(t *testing.T, o *httpwatch.Object, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, o.Decode(&m))
	for k, v := range set {
		if k == "spec.replicas" {
			m["spec"].(map[string]any)["replicas"] = v
			continue
		}
		m[k] = v
	}
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// The scale subresource reads and writes a Deployment's replicas as an
// autoscaling/v1 Scale.
func TestScaleSubresource(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	deps := c.Resource(deployments).Namespace(ns)
	_, err := deps.Create(ctx, deployment("web", 1))
	require.NoError(t, err)
	scale := deps.Subresource("scale")

	s, err := scale.Get(ctx, "web")
	require.NoError(t, err)
	assert.Equal(t, "autoscaling/v1", s.Get("apiVersion").String())
	assert.Equal(t, "Scale", s.Get("kind").String())
	assert.Equal(t, int64(1), s.Get("spec.replicas").Int())
	assert.Equal(t, "app=web", s.Get("status.selector").String())

	up, err := scale.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":%q,"resourceVersion":%q},"spec":{"replicas":3}}`, ns, s.ResourceVersion()))
	require.NoError(t, err)
	assert.Equal(t, int64(3), up.Get("spec.replicas").Int())
	_, err = scale.Update(ctx, fmt.Appendf(nil, `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web","namespace":%q,"resourceVersion":%q},"spec":{"replicas":2}}`, ns, s.ResourceVersion()))
	assert.True(t, httpwatch.IsConflict(err), "%v", err)

	_, err = scale.Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"spec":{"replicas":4}}`))
	require.NoError(t, err)
	d, err := deps.Get(ctx, "web")
	require.NoError(t, err)
	assert.Equal(t, int64(4), d.Get("spec.replicas").Int())
}
