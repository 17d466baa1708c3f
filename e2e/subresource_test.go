package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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

	data := setJSON(t, got, map[string]any{"status": map[string]any{"observedGeneration": 1, "replicas": 1, "readyReplicas": 1}, "spec.replicas": 5})
	upd, err := status.Update(ctx, data, httpwatch.WriteOptions{FieldManager: "reporter"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), upd.Get("status.readyReplicas").Int())
	assert.Equal(t, int64(1), upd.Get("spec.replicas").Int(), "a status update leaves spec alone")

	_, err = status.Update(ctx, data)
	assert.True(t, httpwatch.IsConflict(err), "the status update is checked against its resourceVersion: %v", err)

	patched, err := status.Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"status":{"conditions":[{"type":"Available","status":"True"}]}}`))
	require.NoError(t, err)
	assert.Equal(t, "True", patched.Get(`status.conditions.#(type=="Available").status`).String())

	applied, err := status.Apply(ctx, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"status":{"availableReplicas":1}}`),
		httpwatch.WriteOptions{FieldManager: "reporter"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), applied.Get("status.availableReplicas").Int())

	obj := setJSON(t, applied, map[string]any{"status": map[string]any{}})
	whole, err := deps.Update(ctx, obj)
	require.NoError(t, err)
	assert.Equal(t, int64(1), whole.Get("status.availableReplicas").Int(), "an update of the object leaves status alone")
}

// setJSON decodes o, sets top-level fields (or "a.b" one level down) and
// encodes it again.
func setJSON(t *testing.T, o *raw.Object, set map[string]any) []byte {
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

// A strategic merge patch merges a built-in list by its key (containers by
// name; the server puts the new ones first), where a merge patch replaces
// the list.
func TestStrategicMergePatch(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	deps := c.Resource(deployments).Namespace(namespace(t, c))
	_, err := deps.Create(ctx, deployment("web", 1))
	require.NoError(t, err)
	sidecar := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}`)

	merged, err := deps.Patch(ctx, "web", httpwatch.StrategicMergePatch, sidecar)
	require.NoError(t, err)
	assert.Equal(t, `["side","c"]`, merged.Get("spec.template.spec.containers.#.name").Raw)
	replaced, err := deps.Patch(ctx, "web", httpwatch.MergePatch, sidecar)
	require.NoError(t, err)
	assert.Equal(t, `["side"]`, replaced.Get("spec.template.spec.containers.#.name").Raw)
}
