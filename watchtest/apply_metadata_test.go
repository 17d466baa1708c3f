package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// Labels and annotations an apply sets are owned like any other field:
// only a name, namespace, resourceVersion, managedFields and what the
// server sets belong to no manager, so another manager applying another
// label value conflicts (decision 7).
func TestApplyOwnsMetadataLabels(t *testing.T) {
	s := newServer(t)
	labelled := func(tier string) string {
		return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","namespace":"prod","labels":{"tier":"` + tier + `"}}}`
	}
	code, body := send(t, s, http.MethodPatch, cmPath+"b?fieldManager=m1", applyType, labelled("gold"))
	require.Equal(t, http.StatusCreated, code, "%s", body)

	before := s.ResourceVersion()
	code, body = send(t, s, http.MethodPatch, cmPath+"b?fieldManager=m2", applyType, labelled("silver"))
	require.Equal(t, http.StatusConflict, code, "%s", body)
	assert.Equal(t, `Apply failed with 1 conflict: conflict with "m1": .metadata.labels.tier`, gjson.GetBytes(body, "message").String())
	assert.Equal(t, before, s.ResourceVersion(), "a conflicting apply changes nothing")
}

// The causes of a 409 apply conflict come in the order of the fields'
// paths, whoever owns them; the message groups them by manager
// (decision 7).
func TestApplyConflictCausesSortedByPath(t *testing.T) {
	s := newServer(t)
	code, body := send(t, s, http.MethodPatch, cmPath+"b?fieldManager=m1", applyType, cmApply(`{"z":"1"}`))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	code, body = send(t, s, http.MethodPatch, cmPath+"b?fieldManager=m2", applyType, cmApply(`{"a":"1"}`))
	require.Equal(t, http.StatusOK, code, "%s", body)

	code, body = send(t, s, http.MethodPatch, cmPath+"b?fieldManager=m3", applyType, cmApply(`{"a":"2","z":"2"}`))
	require.Equal(t, http.StatusConflict, code, "%s", body)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 2 conflicts: conflicts with \"m1\":\n- .data.z\nconflicts with \"m2\":\n- .data.a","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"m2\"","field":".data.a"},{"reason":"FieldManagerConflict","message":"conflict with \"m1\"","field":".data.z"}]},"code":409}`+"\n", string(body))
}
