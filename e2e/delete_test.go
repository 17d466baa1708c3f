package e2e

import (
	"context"
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
	require.NoError(t, cms.DeleteCollection(ctx, httpwatch.ListOptions{LabelSelector: "tier=cache", FieldSelector: "metadata.name!=cm-3"}))
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
