package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func labelledConfigMap(ns, name, app, keep string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q,"labels":{"app":%q},`+
		`"annotations":{"note":"not cached"}},"data":{"keep":%q,"drop":"not cached either"}}`, name, ns, app, keep)
}

// a projection cuts what a real server sends, listed and watched,
// with a label selector, and in metadata-only mode.
func TestProjection(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	res := httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns}
	rc := c.Resource(res)
	for _, cm := range [][]byte{labelledConfigMap(ns, "a", "web", "1"), labelledConfigMap(ns, "b", "db", "1")} {
		_, err := rc.Create(context.Background(), cm)
		require.NoError(t, err)
	}
	proj, err := raw.NewProjection("metadata.labels", "data.keep")
	require.NoError(t, err)
	inf := listwatch.NewInformer(c.Resource(res), 0, listwatch.Selector{Label: "app=web", Projection: proj})
	run(t, inf)

	check := func(o *listwatch.Object, keep string) {
		t.Helper()
		want := fmt.Sprintf(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":%q,"uid":%q,"resourceVersion":%q,`+
			`"labels":{"app":"web"}},"data":{"keep":%q}}`, ns, o.UID(), o.ResourceVersion(), keep)
		assert.JSONEq(t, want, o.String())
		assert.NotEmpty(t, o.UID())
		assert.Nil(t, o.Annotations())
	}
	require.Equal(t, []string{ns + "/a"}, inf.Indexer().ListKeys())
	o, err := inf.Lister().Get(ns, "a")
	require.NoError(t, err)
	check(o, "1")

	updated, err := rc.Update(context.Background(), labelledConfigMap(ns, "a", "web", "2"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		o, err := inf.Lister().Get(ns, "a")
		return err == nil && o.ResourceVersion() == updated.ResourceVersion()
	}, wait, 10*time.Millisecond)
	o, err = inf.Lister().Get(ns, "a")
	require.NoError(t, err)
	check(o, "2")

	meta := c.Resource(res)
	meta.MetadataOnly = true
	meta.Projection, err = raw.NewProjection("metadata.labels")
	require.NoError(t, err)
	page, err := meta.List(context.Background(), httpwatch.ListOptions{LabelSelector: "app=db"})
	require.NoError(t, err)
	require.Len(t, page.Items, 1)
	b := page.Items[0]
	assert.JSONEq(t, fmt.Sprintf(`{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"b","namespace":%q,"uid":%q,"resourceVersion":%q,"labels":{"app":"db"}}}`,
		ns, b.UID(), b.ResourceVersion()), b.String())
}
