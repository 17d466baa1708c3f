package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// An apply that would replace a subtree another manager owns fields in
// (an object by a scalar) conflicts, once, at the path applied, not only
// an apply of the same field with another value; force takes the fields
// (decision 7).
func TestApplyOverAnOwnedSubtreeConflicts(t *testing.T) {
	s := newServer(t)
	s.AddResource(widgets, widget)
	const path = "/apis/example.com/v1/namespaces/prod/widgets/w"
	widget := func(spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":` + spec + `}`
	}
	code, body := send(t, s, http.MethodPatch, path+"?fieldManager=m1", applyType, widget(`{"a":{"b":"1","c":"2"}}`))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	before := s.ResourceVersion()
	code, body = send(t, s, http.MethodPatch, path+"?fieldManager=m2", applyType, widget(`{"a":"flat"}`))
	require.Equal(t, http.StatusConflict, code, "%s", body)
	// As kube-apiserver 1.37 answers (e2e.TestWatchtestCustomResourceGeneration).
	assert.Equal(t, `Apply failed with 1 conflict: conflict with "m1": .spec.a`, gjson.GetBytes(body, "message").String())
	assert.Equal(t, before, s.ResourceVersion(), "a conflicting apply changes nothing")

	code, body = send(t, s, http.MethodPatch, path+"?fieldManager=m2&force=true", applyType, widget(`{"a":"flat"}`))
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "flat", gjson.GetBytes(body, "spec.a").String())
	for _, mf := range gjson.GetBytes(body, "metadata.managedFields").Array() {
		if mf.Get("manager").String() == "m1" {
			assert.False(t, mf.Get("fieldsV1.f:spec").Exists(), "m1 lost the fields force took: %s", mf.Raw)
		}
	}
}
