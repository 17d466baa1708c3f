package watchtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// Deletes with options, as recorded from the real server (which runs no
// garbage collector here: Foreground and Orphan leave the object waiting
// for the finalizer they add; decision 7).
func TestDeleteOptions(t *testing.T) {
	tests := []struct {
		name       string
		obj        string
		query      string
		body       string
		code       int
		wantBody   string   // the whole answer, when fixed
		finalizers string   // raw metadata.finalizers of the answer, when it is the object
		events     []string // event types the delete sends
		gone       bool
	}{
		{name: "plain delete answers Success", obj: `{"metadata":{"name":"a","namespace":"prod","uid":"x"}}`, code: 200,
			events: []string{"DELETED"}, gone: true},
		{name: "finalizers hold the object", obj: `{"metadata":{"name":"a","namespace":"prod","finalizers":["x.io/f"]}}`, code: 200,
			finalizers: `["x.io/f"]`, events: []string{"MODIFIED"}},
		{name: "foreground", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"propagationPolicy":"Foreground"}`, code: 200,
			finalizers: `["foregroundDeletion"]`, events: []string{"MODIFIED"}},
		{name: "orphan", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, query: "?propagationPolicy=Orphan", code: 200,
			finalizers: `["orphan"]`, events: []string{"MODIFIED"}},
		{name: "background", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Background","gracePeriodSeconds":5}`, code: 200,
			events: []string{"DELETED"}, gone: true},
		{name: "dry run", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, query: "?dryRun=All", code: 200},
		{name: "dry run foreground", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"dryRun":["All"],"propagationPolicy":"Foreground"}`, code: 200,
			finalizers: `["foregroundDeletion"]`},
		{name: "bad propagation", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"propagationPolicy":"Bogus"}`, code: 422,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"DeleteOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: \"Bogus\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\"","field":"propagationPolicy"}]},"code":422}` + "\n"},
		{name: "bad dry run", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, query: "?dryRun=Bad", code: 422,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"DeleteOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"Bad\"]: supported values: \"All\"","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"DeleteOptions","causes":[{"reason":"FieldValueNotSupported","message":"Unsupported value: [\"Bad\"]: supported values: \"All\"","field":"dryRun"}]},"code":422}` + "\n"},
		{name: "uid precondition", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"preconditions":{"uid":"wrong"}}`, code: 409,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on ConfigMap \"a\": the UID in the precondition (wrong) does not match the UID in record (UID). The object might have been deleted and then recreated","reason":"Conflict","details":{"name":"a","kind":"ConfigMap"},"code":409}` + "\n"},
		{name: "resourceVersion precondition", obj: `{"metadata":{"name":"a","namespace":"prod"}}`, body: `{"preconditions":{"resourceVersion":"1"}}`, code: 409,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on ConfigMap \"a\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (RV). The object might have been modified","reason":"Conflict","details":{"name":"a","kind":"ConfigMap"},"code":409}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			o := mustCreate(t, s, watchtest.ConfigMaps, tt.obj)
			w := openWatch(t, s, "/api/v1/namespaces/prod/configmaps?watch=1&resourceVersion="+rvOf(o))
			code, body := send(t, s, http.MethodDelete, cmPath+"a"+tt.query, "application/json", tt.body)
			require.Equal(t, tt.code, code, "%s", body)
			uid := o.Get("metadata.uid").String()
			switch {
			case tt.wantBody != "":
				want := strings.NewReplacer("(UID)", "("+uid+")", "(RV)", "("+rvOf(o)+")").Replace(tt.wantBody)
				assert.Equal(t, want, string(body))
			case tt.finalizers != "":
				got := gjson.ParseBytes(body)
				assert.Equal(t, tt.finalizers, got.Get("metadata.finalizers").Raw)
				assert.NotEmpty(t, got.Get("metadata.deletionTimestamp").String())
				assert.Equal(t, int64(0), got.Get("metadata.deletionGracePeriodSeconds").Int())
			default:
				assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","kind":"configmaps","uid":"`+uid+`"}}`+"\n", string(body))
			}
			_, err := s.Get(watchtest.ConfigMaps, "prod", "a")
			assert.Equal(t, tt.gone, err != nil, "gone")
			// A create after the delete marks the end of its events.
			mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"end","namespace":"prod"}}`)
			var got []string
			for e := w.next(); e.get("metadata.name") != "end"; e = w.next() {
				got = append(got, e.Type)
			}
			assert.Equal(t, tt.events, got)
		})
	}
}

// An object waiting for finalizers goes when an update or patch removes
// the last one: MODIFIED on delete, DELETED on the patch.
func TestFinalizerRemovalByPatch(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"}}`)
	w := openWatch(t, s, "/api/v1/namespaces/prod/configmaps?watch=1&resourceVersion="+rvOf(o))
	code, body := send(t, s, http.MethodDelete, cmPath+"a", "application/json", `{"propagationPolicy":"Foreground"}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "MODIFIED", w.next().Type)
	code, body = send(t, s, http.MethodPatch, cmPath+"a", mergeType, `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	e := w.next()
	assert.Equal(t, "DELETED a "+s.ResourceVersion(), e.String())
	assert.Equal(t, `["foregroundDeletion"]`, e.get("metadata.finalizers"), "the event has the last stored state")
	assert.False(t, gjson.GetBytes(body, "metadata.finalizers").Exists(), "the answer is the object as patched")
	_, err := s.Get(watchtest.ConfigMaps, "prod", "a")
	assert.ErrorIs(t, err, watchtest.ErrNotFound)
}

func TestDeleteCollection(t *testing.T) {
	s := newServer(t)
	for _, n := range []string{"c1", "c2", "c3"} {
		mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"`+n+`","namespace":"prod","labels":{"del":"yes"}}}`)
	}
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"keep","namespace":"prod"}}`)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"other-ns","namespace":"dev","labels":{"del":"yes"}}}`)

	code, body := send(t, s, http.MethodDelete, "/api/v1/namespaces/prod/configmaps?labelSelector=del%3Dyes&dryRun=All", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Len(t, s.List(watchtest.ConfigMaps, "prod"), 4, "a dry run deletes nothing")

	code, body = send(t, s, http.MethodDelete, "/api/v1/namespaces/prod/configmaps?labelSelector=del%3Dyes", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	list := gjson.ParseBytes(body)
	assert.Equal(t, "ConfigMapList", list.Get("kind").String())
	assert.Equal(t, []string{"c1", "c2", "c3"}, names(list.Get("items").Array()))
	assert.Equal(t, s.ResourceVersion(), list.Get("metadata.resourceVersion").String())
	left := s.List(watchtest.ConfigMaps, "")
	require.Len(t, left, 2)

	code, body = send(t, s, http.MethodDelete, "/api/v1/namespaces/prod/configmaps?fieldSelector=metadata.name%3Dkeep", "", "")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, []string{"keep"}, names(gjson.GetBytes(body, "items").Array()))

	code, _ = send(t, s, http.MethodDelete, "/api/v1/namespaces/prod/configmaps?labelSelector===", "", "")
	assert.Equal(t, http.StatusBadRequest, code)
	code, _ = send(t, s, http.MethodDelete, "/api/v1/configmaps", "", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code, "a namespaced collection is deleted one namespace at a time")
}

// Create, update and patch with dryRun=All answer as if written and
// change nothing; other options are checked as the real server does.
func TestWriteOptions(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"},"data":{"k":"v"}}`)
	rv := s.ResourceVersion()
	tests := []struct {
		name, method, path, ct, body string
		code                         int
		message                      string
	}{
		{"dry-run create", http.MethodPost, "/api/v1/namespaces/prod/configmaps?dryRun=All", "application/json", `{"metadata":{"name":"dry"}}`, 201, ""},
		{"dry-run update", http.MethodPut, cmPath + "a?dryRun=All", "application/json", `{"metadata":{"name":"a"},"data":{"k":"dry"}}`, 200, ""},
		{"dry-run patch", http.MethodPatch, cmPath + "a?dryRun=All", mergeType, `{"data":{"k":"dry"}}`, 200, ""},
		{"bad dryRun", http.MethodPost, "/api/v1/namespaces/prod/configmaps?dryRun=Foo", "application/json", `{"metadata":{"name":"dry"}}`, 422,
			`CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["Foo"]: supported values: "All"`},
		{"bad fieldValidation", http.MethodPut, cmPath + "a?fieldValidation=Bogus", "application/json", `{"metadata":{"name":"a"}}`, 422,
			`UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: "", "Ignore", "Strict", "Warn"`},
		{"strict duplicate field", http.MethodPost, "/api/v1/namespaces/prod/configmaps?fieldValidation=Strict", "application/json", `{"metadata":{"name":"v"},"data":{"a":"b"},"data":{"c":"d"}}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "data"`},
		{"strict unknown metadata field", http.MethodPost, "/api/v1/namespaces/prod/configmaps?fieldValidation=Strict", "application/json", `{"metadata":{"name":"v","bogus":1}}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus"`},
		{"strict patch", http.MethodPatch, cmPath + "a?fieldValidation=Strict", mergeType, `{"metadata":{"bogus":1}}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "metadata.bogus"`},
	}
	for _, tt := range tests {
		code, body := send(t, s, tt.method, tt.path, tt.ct, tt.body)
		require.Equal(t, tt.code, code, "%s: %s", tt.name, body)
		if tt.message != "" {
			assert.Equal(t, tt.message, gjson.GetBytes(body, "message").String(), tt.name)
		} else if tt.method != http.MethodPost {
			assert.Equal(t, "dry", gjson.GetBytes(body, "data.k").String(), tt.name)
			assert.Equal(t, rvOf(o), rvOf(gjson.ParseBytes(body)), "%s keeps the resourceVersion", tt.name)
		}
		assert.Equal(t, rv, s.ResourceVersion(), "%s stores nothing", tt.name)
	}
	stored, err := s.Get(watchtest.ConfigMaps, "prod", "a")
	require.NoError(t, err)
	assert.Equal(t, "v", stored.Get("data.k").String())
	_, err = s.Get(watchtest.ConfigMaps, "prod", "dry")
	assert.ErrorIs(t, err, watchtest.ErrNotFound)
}
