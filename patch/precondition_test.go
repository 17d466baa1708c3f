package patch_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/watchtest"
)

// A uid precondition refuses an object deleted and created again under the
// same name (422, the uid being immutable); a resourceVersion one refuses
// an object changed since (409). Both pass on the object read.
func TestPreconditionsOnTheServer(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	cms := client.Resource(watchtest.ConfigMaps).Namespace("ns")
	ctx := context.Background()
	old, err := cms.Create(ctx, []byte(`{"metadata":{"name":"a"}}`))
	require.NoError(t, err)

	for _, pre := range []patch.Precondition{patch.ResourceVersion, patch.UID} {
		body, err := patch.Merge(old, pre).Set("metadata.labels.ok", "yes").Bytes()
		require.NoError(t, err)
		_, err = cms.Patch(ctx, "a", httpwatch.MergePatch, body)
		require.NoError(t, err, "precondition %d holds", pre)
	}
	require.NoError(t, cms.Delete(ctx, "a"))
	_, err = cms.Create(ctx, []byte(`{"metadata":{"name":"a"}}`))
	require.NoError(t, err)

	body, err := patch.Merge(old, patch.UID).Set("metadata.labels.ok", "no").Bytes()
	require.NoError(t, err)
	_, err = cms.Patch(ctx, "a", httpwatch.MergePatch, body)
	var se *httpwatch.StatusError
	require.True(t, errors.As(err, &se), "%v", err)
	assert.Equal(t, http.StatusUnprocessableEntity, se.Code, "%v", err)

	body, err = patch.Merge(old, patch.ResourceVersion).Set("metadata.labels.ok", "no").Bytes()
	require.NoError(t, err)
	_, err = cms.Patch(ctx, "a", httpwatch.MergePatch, body)
	assert.True(t, httpwatch.IsConflict(err), "%v", err)
}
