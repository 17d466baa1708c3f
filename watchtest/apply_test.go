package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

func cmApply(data string) string {
	return `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":` + data + `}`
}

// Server-side apply as recorded from the real server: the steps run in
// order on one server, each an apply (or a merge patch) by a manager
// (decision 7).
func TestApply(t *testing.T) {
	s := newServer(t)
	steps := []struct {
		name      string
		query, ct string
		body      string
		code      int
		data      string // the object's data after a success
		wantBody  string
	}{
		{name: "without fieldManager", ct: applyType, body: cmApply(`{"k":"v"}`), code: 422,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"PatchOptions","causes":[{"reason":"FieldValueRequired","message":"Required value: is required for apply patch","field":"fieldManager"}]},"code":422}` + "\n"},
		{name: "creates", query: "?fieldManager=m1", ct: applyType, body: cmApply(`{"k":"v"}`), code: 201, data: `{"k":"v"}`},
		{name: "same value is shared", query: "?fieldManager=m2", ct: applyType, body: cmApply(`{"k":"v"}`), code: 200, data: `{"k":"v"}`},
		{name: "YAML, other value conflicts", query: "?fieldManager=m3", ct: applyType, body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: other\n", code: 409,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 2 conflicts: conflicts with \"m1\":\n- .data.k\nconflicts with \"m2\":\n- .data.k","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"m1\"","field":".data.k"},{"reason":"FieldManagerConflict","message":"conflict with \"m2\"","field":".data.k"}]},"code":409}` + "\n"},
		{name: "force takes the field", query: "?fieldManager=m3&force=true", ct: applyType, body: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: other\n", code: 200, data: `{"k":"other"}`},
		{name: "m1 adds a field and no longer owns k", query: "?fieldManager=m1", ct: applyType, body: cmApply(`{"j":"v","l":"x"}`), code: 200, data: `{"j":"v","k":"other","l":"x"}`},
		{name: "an update takes a field", query: "", ct: mergeType, body: `{"data":{"l":"y"}}`, code: 200, data: `{"j":"v","k":"other","l":"y"}`},
		{name: "one conflict, with an update manager", query: "?fieldManager=m1", ct: applyType, body: cmApply(`{"j":"v","l":"z"}`), code: 409,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Apply failed with 1 conflict: conflict with \"Go-http-client\" using v1: .data.l","reason":"Conflict","details":{"causes":[{"reason":"FieldManagerConflict","message":"conflict with \"Go-http-client\" using v1","field":".data.l"}]},"code":409}` + "\n"},
		{name: "a field the manager drops is removed", query: "?fieldManager=m1", ct: applyType, body: cmApply(`{"l":"y"}`), code: 200, data: `{"k":"other","l":"y"}`},
		{name: "resourceVersion is a precondition", query: "?fieldManager=m1", ct: applyType, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b","resourceVersion":"1"}}`, code: 409},
		{name: "kind is required", query: "?fieldManager=m1", ct: applyType, body: `{"metadata":{"name":"b"}}`, code: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid object type: /, Kind=","reason":"BadRequest","code":400}` + "\n"},
		{name: "another name", query: "?fieldManager=m1", ct: applyType, body: `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}`, code: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (c) does not match the name on the URL (b)","reason":"BadRequest","code":400}` + "\n"},
		{name: "bad YAML", query: "?fieldManager=m1", ct: applyType, body: "a: [b", code: 400},
	}
	for _, st := range steps {
		before := s.ResourceVersion()
		code, body := send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/b"+st.query, st.ct, st.body)
		require.Equal(t, st.code, code, "%s: %s", st.name, body)
		if st.wantBody != "" {
			assert.Equal(t, st.wantBody, string(body), st.name)
		}
		if code >= 300 {
			assert.Equal(t, before, s.ResourceVersion(), "%s: a failed apply changes nothing", st.name)
			continue
		}
		assert.JSONEq(t, st.data, gjson.GetBytes(body, "data").Raw, st.name)
	}
}

func TestApplyDryRunAndCreateEvent(t *testing.T) {
	s := newServer(t)
	from := s.ResourceVersion()
	w := openWatch(t, s, "/api/v1/namespaces/prod/configmaps?watch=1&resourceVersion="+from)
	code, body := send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/b?fieldManager=m&dryRun=All", applyType, cmApply(`{"k":"v"}`))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	assert.False(t, gjson.GetBytes(body, "metadata.resourceVersion").Exists(), "a dry-run create has no resourceVersion")
	assert.Equal(t, from, s.ResourceVersion())
	_, err := s.Get(watchtest.ConfigMaps, "prod", "b")
	require.ErrorIs(t, err, watchtest.ErrNotFound)

	code, body = send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/b?fieldManager=m", applyType, cmApply(`{"k":"v"}`))
	require.Equal(t, http.StatusCreated, code, "%s", body)
	assert.Equal(t, "ADDED b "+rvOf(gjson.ParseBytes(body)), w.next().String(), "the dry run sent no event")
}

// A server-side apply carrying the uid of a deleted object is refused with
// the real server's 409, not a new incarnation under the old name
// (decision 7).
func TestApplyWithTheUIDOfADeletedObject(t *testing.T) {
	s := newServer(t)
	uid := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"c","namespace":"p"}}`).Get("metadata.uid").String()
	_, err := s.Delete(watchtest.ConfigMaps, "p", "c")
	require.NoError(t, err)
	code, body := send(t, s, http.MethodPatch, "/api/v1/namespaces/p/configmaps/c?fieldManager=m", "application/apply-patch+yaml",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","uid":"`+uid+`"},"data":{"k":"v"}}`)
	require.Equal(t, http.StatusConflict, code, "%s", body)
	assert.Equal(t, "Conflict", gjson.GetBytes(body, "reason").String())
	assert.Equal(t, `Operation cannot be fulfilled on configmaps "c": uid mismatch: the provided object specified uid `+uid+`, and no existing object was found`, gjson.GetBytes(body, "message").String())
	_, err = s.Get(watchtest.ConfigMaps, "p", "c")
	require.ErrorIs(t, err, watchtest.ErrNotFound, "nothing was recreated")
}
