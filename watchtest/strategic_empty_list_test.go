package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// In a strategic merge patch an empty list for a list merged on a key
// merges nothing: the real server keeps the items (only "$patch":
// "replace" or null clears such a list), while a list replaced whole
// becomes empty.
func TestStrategicMergeEmptyKeyedListKeepsItems(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod"},"spec":{"template":{"spec":{"containers":[
		{"name":"app","image":"app:1","args":["-v"],"env":[{"name":"A","value":"1"}]}]}}}}`)
	code, body := send(t, s, http.MethodPatch, depPath+"d", smpType, `{"spec":{"template":{"spec":{"containers":[{"name":"app","args":[],"env":[]}]}}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.JSONEq(t, `[{"name":"app","image":"app:1","args":[],"env":[{"name":"A","value":"1"}]}]`, gjson.GetBytes(body, "spec.template.spec.containers").Raw)

	code, body = send(t, s, http.MethodPatch, depPath+"d", smpType, `{"spec":{"template":{"spec":{"containers":[]}}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.JSONEq(t, `[{"name":"app","image":"app:1","args":[],"env":[{"name":"A","value":"1"}]}]`, gjson.GetBytes(body, "spec.template.spec.containers").Raw)
}
