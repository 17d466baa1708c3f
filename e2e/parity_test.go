package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/httpwatch/watchtest"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcome describes the answer to a write so that two servers can be
// compared: the status code and reason of an error, or the fields asked
// for (resourceVersions, uids and times differ between servers).
func outcome(o *httpwatch.Object, err error, fields ...string) string {
	if err != nil {
		var se *httpwatch.StatusError
		if errors.As(err, &se) {
			causes := ""
			for _, c := range se.Details.Causes {
				causes += fmt.Sprintf(" [%s %s]", c.Reason, c.Field)
			}
			return fmt.Sprintf("%d %s%s", se.Code, se.Reason, causes)
		}
		return "error: " + err.Error()
	}
	var out []string
	for _, f := range fields {
		out = append(out, f+"="+o.Get(f).Raw)
	}
	return strings.Join(out, " ")
}

// writeScript runs the same writes on any server and returns their
// outcomes, one line each.
func writeScript(ctx context.Context, cms, deps *httpwatch.ResourceClient) []string {
	var out []string
	note := func(what string, o *httpwatch.Object, err error, fields ...string) {
		out = append(out, what+": "+outcome(o, err, fields...))
	}
	cfg := func(v string) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"applied"},"data":{"x":%q}}`, v)
	}
	o, err := cms.Create(ctx, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"tier":"cache"}},"data":{"v":"1"}}`))
	note("create", o, err, "data")
	first := o
	o, err = cms.Patch(ctx, "a", httpwatch.MergePatch, []byte(`{"metadata":{"labels":{"checked":"true"}},"data":{"v":null,"w":"2"}}`))
	note("merge patch", o, err, "metadata.labels", "data")
	o, err = cms.Patch(ctx, "a", httpwatch.JSONPatch, []byte(`[{"op":"add","path":"/data/z","value":"3"},{"op":"remove","path":"/data/w"}]`))
	note("json patch", o, err, "data")
	o, err = cms.Patch(ctx, "a", httpwatch.JSONPatch, []byte(`[{"op":"test","path":"/data/z","value":"9"}]`))
	note("json patch failed test", o, err)
	o, err = cms.Patch(ctx, "missing", httpwatch.MergePatch, []byte(`{}`))
	note("patch missing", o, err)
	o, err = cms.Patch(ctx, "a", httpwatch.MergePatch, fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q}}`, first.ResourceVersion()))
	note("merge patch stale version", o, err)
	o, err = cms.Create(ctx, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dry"}}`), httpwatch.WriteOptions{DryRun: true})
	note("dry-run create", o, err, "metadata.name", "metadata.resourceVersion")
	o, err = cms.Get(ctx, "dry")
	note("get dry", o, err)

	o, err = cms.Apply(ctx, cfg("1"), httpwatch.ApplyOptions{FieldManager: "alice"})
	note("apply alice", o, err, "data")
	o, err = cms.Apply(ctx, cfg("2"), httpwatch.ApplyOptions{FieldManager: "bob"})
	note("apply bob", o, err)
	o, err = cms.Apply(ctx, cfg("2"), httpwatch.ApplyOptions{FieldManager: "bob", Force: true})
	note("apply bob forced", o, err, "data")

	err = cms.Delete(ctx, "a", httpwatch.DeleteOptions{Preconditions: httpwatch.Preconditions{UID: "not-the-uid"}})
	note("delete wrong uid", nil, err)
	err = cms.Delete(ctx, "a", httpwatch.DeleteOptions{DryRun: true})
	note("dry-run delete", nil, err)
	o, err = cms.Get(ctx, "a")
	note("get after dry-run delete", o, err, "metadata.name")
	err = cms.DeleteCollection(ctx, httpwatch.ListOptions{LabelSelector: "tier=cache"}, httpwatch.DeleteOptions{})
	note("delete collection", nil, err)
	o, err = cms.Get(ctx, "a")
	note("get deleted", o, err)

	o, err = deps.Create(ctx, deployment("web", 1))
	note("create deployment", o, err, "spec.replicas")
	o, err = deps.Subresource("scale").Get(ctx, "web")
	note("get scale", o, err, "apiVersion", "kind", "spec")
	o, err = deps.Subresource("scale").Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"spec":{"replicas":3}}`))
	note("patch scale", o, err, "spec")
	o, err = deps.Subresource("status").Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"spec":{"replicas":9},"status":{"replicas":3}}`))
	note("patch status", o, err, "spec.replicas", "status.replicas")
	o, err = deps.Patch(ctx, "web", httpwatch.MergePatch, []byte(`{"spec":{"replicas":4},"status":{"replicas":0}}`))
	note("patch object", o, err, "spec.replicas", "status.replicas")
	return out
}

// watchtest answers the same writes as the real server, outcome for
// outcome.
func TestWatchtestWritesAsTheRealServer(t *testing.T) {
	ctx := context.Background()
	c := client(t)
	ns := namespace(t, c)
	real := writeScript(ctx, c.Resource(configMaps).Namespace(ns), c.Resource(deployments).Namespace(ns))

	server := watchtest.NewServer()
	defer server.Close()
	fc, err := httpwatch.NewClient(&kubeconfig.Config{Host: server.URL})
	require.NoError(t, err)
	defer fc.CloseIdleConnections()
	fake := writeScript(ctx, fc.Resource(configMaps).Namespace("parity"), fc.Resource(deployments).Namespace("parity"))
	assert.Equal(t, real, fake)
}
