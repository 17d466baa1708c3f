package watchtest_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// A dry-run create answers the object as the same create would have stored
// it, without the resourceVersion it never got: every other member of
// metadata stays, in its place, and the body is still one JSON object.
func TestDryRunCreateAnswersObjectWithoutResourceVersion(t *testing.T) {
	s := newServer(t)
	const obj = `{"metadata":{"name":"c","labels":{"app":"web"},"annotations":{"a":"1"}},"data":{"k":"v"}}`
	code, dry := send(t, s, http.MethodPost, "/api/v1/namespaces/prod/configmaps?dryRun=All", "application/json", obj)
	require.Equal(t, http.StatusCreated, code, "%s", dry)
	require.True(t, json.Valid(dry), "not JSON: %s", dry)
	assert.False(t, gjson.GetBytes(dry, "metadata.resourceVersion").Exists(), "%s", dry)

	code, stored := send(t, s, http.MethodPost, "/api/v1/namespaces/prod/configmaps", "application/json", obj)
	require.Equal(t, http.StatusCreated, code, "%s", stored)
	want := slices.DeleteFunc(keysOf(t, []byte(gjson.GetBytes(stored, "metadata").Raw)), func(k string) bool { return k == "resourceVersion" })
	assert.Equal(t, want, keysOf(t, []byte(gjson.GetBytes(dry, "metadata").Raw)), "%s", dry)

	// Apart from the resourceVersion, only what each create makes afresh
	// differs.
	var d, w map[string]any
	require.NoError(t, json.Unmarshal(dry, &d))
	require.NoError(t, json.Unmarshal(stored, &w))
	dm, wm := d["metadata"].(map[string]any), w["metadata"].(map[string]any)
	delete(wm, "resourceVersion")
	for _, k := range []string{"uid", "creationTimestamp"} {
		assert.NotEmpty(t, dm[k], k)
		dm[k] = wm[k]
	}
	assert.Equal(t, w, d)
}
