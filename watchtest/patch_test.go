package watchtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/watchtest"
)

const (
	mergeType     = "application/merge-patch+json"
	jsonPatchType = "application/json-patch+json"
	smpType       = "application/strategic-merge-patch+json"
	applyType     = "application/apply-patch+yaml"
)

// send sends a request with a content type and returns the status and body.
func send(t *testing.T, s *watchtest.Server, method, path, contentType, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, b
}

const cmPath = "/api/v1/namespaces/prod/configmaps/"

// The real server's Status bodies, as recorded from kube-apiserver 1.37.
const (
	patchRejected = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server rejected our request due to an error in our request","reason":"Invalid","details":{},"code":422}` + "\n"
	cmConflict    = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"a","kind":"configmaps"},"code":409}` + "\n"
)

// Patches of every media type, with the real server's answers (decision 7).
func TestPatch(t *testing.T) {
	big := `{"metadata":{"name":"a","namespace":"prod","labels":{"x":"1"}},"data":{"k":"v"},"n":9007199254740993}`
	tests := []struct {
		name     string
		ct, body string
		code     int
		want     map[string]string // gjson path -> raw JSON, on success
		wantBody string            // the whole response, on failure
	}{
		{name: "merge", ct: mergeType, body: `{"metadata":{"labels":{"y":"2","x":null}},"data":{"k2":"v2"}}`, code: 200,
			want: map[string]string{"metadata.labels": `{"y":"2"}`, "data": `{"k":"v","k2":"v2"}`, "n": `9007199254740993`}},
		{name: "merge with content type parameters", ct: mergeType + "; charset=utf-8", body: `{"data":null}`, code: 200,
			want: map[string]string{"data": ``}},
		{name: "merge stale resourceVersion", ct: mergeType, body: `{"metadata":{"resourceVersion":"1"},"data":{"z":"1"}}`, code: 409, wantBody: cmConflict},
		{name: "merge renames", ct: mergeType, body: `{"metadata":{"name":"other"}}`, code: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the name of the object (other) does not match the name on the URL (a)","reason":"BadRequest","code":400}` + "\n"},
		{name: "merge changes uid", ct: mergeType, body: `{"metadata":{"uid":"xyz"}}`, code: 422,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \"a\" is invalid: metadata.uid: Invalid value: \"xyz\": field is immutable","reason":"Invalid","details":{"name":"a","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \"xyz\": field is immutable","field":"metadata.uid"}]},"code":422}` + "\n"},
		{name: "merge not JSON", ct: mergeType, body: `{bad`, code: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid JSON patch","reason":"BadRequest","code":400}` + "\n"},
		{name: "merge array", ct: mergeType, body: `[1]`, code: 400,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}","reason":"BadRequest","code":400}` + "\n"},
		{name: "json patch ops and escapes", ct: jsonPatchType, body: `[{"op":"add","path":"/data/a~1b~0c","value":"x"},{"op":"copy","from":"/data/k","path":"/data/k3"},{"op":"move","from":"/data/k3","path":"/data/k4"},{"op":"replace","path":"/data/k","value":"w"},{"op":"remove","path":"/metadata/labels/x"},{"op":"test","path":"/n","value":9007199254740993}]`, code: 200,
			want: map[string]string{"data": `{"a/b~c":"x","k":"w","k4":"v"}`, "metadata.labels": ``, "n": `9007199254740993`}},
		{name: "json patch list ops", ct: jsonPatchType, body: `[{"op":"add","path":"/metadata/finalizers","value":["a/b"]},{"op":"add","path":"/metadata/finalizers/-","value":"c/d"},{"op":"add","path":"/metadata/finalizers/0","value":"e/f"},{"op":"remove","path":"/metadata/finalizers/1"}]`, code: 200,
			want: map[string]string{"metadata.finalizers": `["e/f","c/d"]`}},
		{name: "json patch replace of a missing member adds it", ct: jsonPatchType, body: `[{"op":"replace","path":"/data/new","value":"x"}]`, code: 200,
			want: map[string]string{"data.new": `"x"`}},
		{name: "json patch failed test", ct: jsonPatchType, body: `[{"op":"test","path":"/data/k","value":"nope"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch remove missing", ct: jsonPatchType, body: `[{"op":"remove","path":"/data/missing"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch bad parent", ct: jsonPatchType, body: `[{"op":"add","path":"/nope/x","value":"x"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch index out of range", ct: jsonPatchType, body: `[{"op":"replace","path":"/metadata/finalizers/5","value":"x"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch copy of the whole object", ct: jsonPatchType, body: `[{"op":"copy","from":"","path":"/data/x"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch unknown op", ct: jsonPatchType, body: `[{"op":"frob","path":"/data/k"}]`, code: 422, wantBody: patchRejected},
		{name: "json patch not a list", ct: jsonPatchType, body: `{"op":"add"}`, code: 400},
		{name: "unsupported media type", ct: "text/plain", body: `{}`, code: 415,
			wantBody: `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"415: Unsupported Media Type","reason":"UnsupportedMediaType","details":{},"code":415}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			before := mustCreate(t, s, watchtest.ConfigMaps, big)
			code, body := send(t, s, http.MethodPatch, cmPath+"a", tt.ct, tt.body)
			require.Equal(t, tt.code, code, "%s", body)
			if tt.wantBody != "" {
				assert.Equal(t, tt.wantBody, string(body))
			}
			if code != http.StatusOK {
				assert.Equal(t, rvOf(before), s.ResourceVersion(), "a failed patch changes nothing")
				return
			}
			got := gjson.ParseBytes(body)
			for path, raw := range tt.want {
				assert.Equal(t, raw, got.Get(path).Raw, path)
			}
			assert.NotEqual(t, rvOf(before), rvOf(got), "a patch that changes the object is a new version")
			stored, err := s.Get(watchtest.ConfigMaps, "prod", "a")
			require.NoError(t, err)
			assert.JSONEq(t, stored.String(), string(body), "the answer is what was stored")
		})
	}
}

func TestPatchMissing(t *testing.T) {
	s := newServer(t)
	for _, ct := range []string{mergeType, jsonPatchType, smpType} {
		code, body := send(t, s, http.MethodPatch, cmPath+"missing", ct, `{}`)
		assert.Equal(t, http.StatusNotFound, code, ct)
		assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"missing\" not found","reason":"NotFound","details":{"name":"missing","kind":"configmaps"},"code":404}`+"\n", string(body), ct)
	}
}

// A patch is one MODIFIED event; a patch that changes nothing keeps the
// resourceVersion and sends none, as on the real server.
func TestPatchWatchEvents(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"},"data":{"k":"v"}}`)
	w := openWatch(t, s, "/api/v1/namespaces/prod/configmaps?watch=1&resourceVersion="+rvOf(o))

	code, body := send(t, s, http.MethodPatch, cmPath+"a", jsonPatchType, `[]`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, rvOf(o), rvOf(gjson.ParseBytes(body)))
	code, body = send(t, s, http.MethodPatch, cmPath+"a", mergeType, `{"data":{"k":"v"}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, rvOf(o), rvOf(gjson.ParseBytes(body)))

	code, body = send(t, s, http.MethodPatch, cmPath+"a", mergeType, `{"data":{"k":"w"}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	e := w.next()
	assert.Equal(t, "MODIFIED a "+rvOf(gjson.ParseBytes(body)), e.String(), "the first event is the first change")
	assert.Equal(t, "w", e.get("data.k"))
}

func TestStrategicMergePatch(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod","finalizers":["a.io/x"]},"spec":{"replicas":1,"template":{"spec":{"containers":[
		{"name":"app","image":"app:1","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]},
		{"name":"side","image":"side:1"}]}}}}`)
	code, body := send(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/prod/deployments/d", smpType, `{"metadata":{"finalizers":["b.io/y"]},"spec":{"template":{"spec":{"containers":[
		{"name":"app","image":"app:2","env":[{"name":"B","value":"3"},{"name":"A","$patch":"delete"}]},
		{"name":"side","$patch":"delete"},
		{"name":"new","image":"new:1"}]}}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	got := gjson.ParseBytes(body)
	assert.JSONEq(t, `[{"name":"app","image":"app:2","env":[{"name":"B","value":"3"}]},{"name":"new","image":"new:1"}]`, got.Get("spec.template.spec.containers").Raw,
		"containers and env merge on name; $patch: delete removes an item")
	assert.JSONEq(t, `["a.io/x","b.io/y"]`, got.Get("metadata.finalizers").Raw, "finalizers merge as a set")
	assert.Equal(t, int64(2), got.Get("metadata.generation").Int(), "a spec change is a new generation")

	code, body = send(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/prod/deployments/d", smpType, `{"spec":{"template":{"spec":{"$patch":"replace","containers":[{"name":"only","image":"x"}]}}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.JSONEq(t, `{"containers":[{"name":"only","image":"x"}]}`, gjson.GetBytes(body, "spec.template.spec").Raw)

	// Custom resources have no strategic merge patch (recorded from the
	// real server).
	s.AddResource(widgets, widget)
	mustCreate(t, s, widgets, `{"metadata":{"name":"w","namespace":"prod"}}`)
	code, body = send(t, s, http.MethodPatch, "/apis/example.com/v1/namespaces/prod/widgets/w", smpType, `{"spec":{"size":2}}`)
	assert.Equal(t, http.StatusUnsupportedMediaType, code)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml","reason":"UnsupportedMediaType","code":415}`+"\n", string(body))
}

// The answers to failed writes match recordings of the real server byte
// for byte.
func TestWriteStatusMatchesFixtures(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"cfg","namespace":"fixtures-writes"},"data":{"k":"v"}}`)
	code, body := send(t, s, http.MethodPatch, "/api/v1/namespaces/fixtures-writes/configmaps/app?fieldManager=deployer", applyType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"v"}}`)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	tests := []struct {
		fixture, method, path, ct, body string
	}{
		{"patch-json-test-failed.json", http.MethodPatch, "/api/v1/namespaces/fixtures-writes/configmaps/cfg", jsonPatchType, `[{"op":"test","path":"/data/k","value":"other"}]`},
		{"patch-unsupported-media-type.json", http.MethodPatch, "/api/v1/namespaces/fixtures-writes/configmaps/cfg", "text/plain", `{}`},
		{"apply-conflict.json", http.MethodPatch, "/api/v1/namespaces/fixtures-writes/configmaps/app?fieldManager=controller", applyType, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app"},"data":{"k":"other"}}`},
		{"delete-bad-propagation.json", http.MethodDelete, "/api/v1/namespaces/fixtures-writes/configmaps/cfg", "application/json", `{"propagationPolicy":"Bogus"}`},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			fx := fixtures.Load(t, tt.fixture)
			code, body := send(t, s, tt.method, tt.path, tt.ct, tt.body)
			assert.Equal(t, fx.Status, code)
			assert.Equal(t, string(fx.Body), string(body))
		})
	}
}

// A strategic merge patch orders a merged list as the real server does
// (checked against it by e2e TestWatchtestWritesMatchRealServer): items
// the server has keep their order, and a new item comes before the
// server's items that follow it.
func TestStrategicMergeOrder(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod"},"spec":{"template":{"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`)
	for _, tc := range []struct{ patch, want string }{
		{`[{"name":"side","image":"busybox"}]`, `["side","c"]`},
		{`[{"name":"c","image":"nginx:2"},{"name":"z","image":"z"}]`, `["side","c","z"]`},
		{`[{"name":"z","image":"z:2"},{"name":"a","image":"a"},{"name":"side","$patch":"delete"}]`, `["c","z","a"]`},
	} {
		code, body := send(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/prod/deployments/d", smpType, `{"spec":{"template":{"spec":{"containers":`+tc.patch+`}}}}`)
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.JSONEq(t, tc.want, gjson.GetBytes(body, "spec.template.spec.containers.#.name").Raw, tc.patch)
	}
}

// A patch that changes nothing is a no-op however the stored object's
// nested members were ordered or escaped when it was written: the real
// server compares objects, not bytes, so the resourceVersion and the
// generation stay and no event is sent.
func TestPatchNoOpOfUnsortedObject(t *testing.T) {
	s := newServer(t)
	o := mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod","labels":{"b":"1","a":"\u0032"}},"spec":{"replicas":2,"template":{"spec":{"containers":[{"name":"c","image":"x"}]}}}}`)
	w := openWatch(t, s, "/apis/apps/v1/namespaces/prod/deployments?watch=1&resourceVersion="+rvOf(o))
	path := "/apis/apps/v1/namespaces/prod/deployments/d"
	for _, p := range []struct{ ct, body string }{
		{jsonPatchType, `[{"op":"test","path":"/spec/replicas","value":2}]`},
		{mergeType, `{"metadata":{"labels":{"a":"2"}}}`},
		{smpType, `{}`},
	} {
		code, body := send(t, s, http.MethodPatch, path, p.ct, p.body)
		require.Equal(t, http.StatusOK, code, "%s", body)
		assert.Equal(t, rvOf(o), rvOf(gjson.ParseBytes(body)), "%s %s", p.ct, p.body)
		assert.Equal(t, int64(1), gjson.GetBytes(body, "metadata.generation").Int(), "%s %s", p.ct, p.body)
	}
	code, body := send(t, s, http.MethodPatch, path, mergeType, `{"metadata":{"labels":{"c":"3"}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "MODIFIED d "+rvOf(gjson.ParseBytes(body)), w.next().String(), "the first event is the first change")
	assert.Equal(t, int64(1), gjson.GetBytes(body, "metadata.generation").Int(), "labels are not the spec")
}

// A JSON patch test compares numbers as the real server does: by the text
// the server would write for the stored value, so 2 is not 2.0 (checked on
// kube-apiserver 1.37, whose JSON patch compares scalars byte for byte).
func TestJSONPatchTestNumbers(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod"},"spec":{"replicas":2,"paused":false,"strategy":{"rollingUpdate":{"maxSurge":1}},"x":[1.5,3.0]}}`)
	path := "/apis/apps/v1/namespaces/prod/deployments/d"
	for _, tt := range []struct {
		value string
		code  int
	}{
		{`2`, http.StatusOK},
		{`2.0`, http.StatusUnprocessableEntity},
		{`2e0`, http.StatusUnprocessableEntity},
		{`"2"`, http.StatusUnprocessableEntity},
	} {
		code, body := send(t, s, http.MethodPatch, path, jsonPatchType, `[{"op":"test","path":"/spec/replicas","value":`+tt.value+`}]`)
		assert.Equal(t, tt.code, code, "test %s: %s", tt.value, body)
	}
	for _, tt := range []struct {
		path, value string
		code        int
	}{
		{"/spec/strategy", `{"rollingUpdate":{"maxSurge":1}}`, http.StatusOK},
		{"/spec/strategy", `{"rollingUpdate":{"maxSurge":1.0}}`, http.StatusUnprocessableEntity},
		{"/spec/x", `[1.5,3]`, http.StatusOK},
		{"/spec/x", `[1.5,3.0]`, http.StatusUnprocessableEntity},
	} {
		code, body := send(t, s, http.MethodPatch, path, jsonPatchType, `[{"op":"test","path":"`+tt.path+`","value":`+tt.value+`}]`)
		assert.Equal(t, tt.code, code, "test %s %s: %s", tt.path, tt.value, body)
	}
}

// A custom resource's generation counts every change but those of metadata
// and, with a status subresource, of status: not only spec (checked on
// kube-apiserver 1.37 with a CRD whose schema keeps unknown fields).
func TestCustomResourceGeneration(t *testing.T) {
	s := newServer(t)
	gizmos := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	s.AddResource(gizmos, watchtest.Definition{Kind: "Gizmo", Namespaced: true, Status: true})
	s.AddResource(widgets, widget)
	mustCreate(t, s, gizmos, `{"metadata":{"name":"g","namespace":"prod"},"spec":{"a":1},"data":{"x":1}}`)
	mustCreate(t, s, widgets, `{"metadata":{"name":"w","namespace":"prod"},"spec":{"a":1}}`)
	gizmo, widget := "/apis/example.com/v1/namespaces/prod/gizmos/g", "/apis/example.com/v1/namespaces/prod/widgets/w"
	for _, tt := range []struct {
		name, path, body string
		generation       int64
	}{
		{"a field beside spec", gizmo, `{"data":{"x":2}}`, 2},
		{"a new top-level field", gizmo, `{"other":"y"}`, 3},
		{"labels", gizmo, `{"metadata":{"labels":{"l":"1"}}}`, 3},
		{"status, through its subresource", gizmo + "/status", `{"status":{"ready":true}}`, 3},
		{"status without a subresource", widget, `{"status":{"ready":true}}`, 2},
	} {
		code, body := send(t, s, http.MethodPatch, tt.path, mergeType, tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %s", tt.name, body)
		assert.Equal(t, tt.generation, gjson.GetBytes(body, "metadata.generation").Int(), tt.name)
	}
}

// Metadata the real server cannot decode (a label that is a number, a
// numeric resourceVersion) is refused: 400 on a create or update, 422 on a
// patch (checked against kube-apiserver by e2e
// TestWatchtestWritesMatchRealServer).
func TestMistypedMetadataRefused(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"cfg","namespace":"prod"}}`)
	code, body := send(t, s, http.MethodPost, "/api/v1/namespaces/prod/configmaps", "application/json", `{"metadata":{"name":"n","labels":{"a":1}}}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Equal(t, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`, gjson.GetBytes(body, "message").String())
	code, body = send(t, s, http.MethodPost, "/api/v1/namespaces/prod/configmaps", "application/json", `{"metadata":{"name":"n","labels":{"a":"1","b":2,"c":"3"}}}`)
	assert.Equal(t, http.StatusBadRequest, code, "a bad label after a good one")
	assert.Equal(t, `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string`, gjson.GetBytes(body, "message").String())
	for _, patch := range []string{`{"metadata":{"resourceVersion":5}}`, `{"metadata":{"finalizers":"x"}}`, `{"metadata":{"annotations":{"x":true}}}`} {
		code, body = send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/cfg", mergeType, patch)
		assert.Equal(t, http.StatusUnprocessableEntity, code, patch)
		assert.Equal(t, "patch", gjson.GetBytes(body, "details.causes.0.field").String(), patch)
	}
	code, _ = send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/cfg", mergeType, `{"metadata":{"labels":{"a":"1"}}}`)
	assert.Equal(t, http.StatusOK, code, "strings are fine")
}

// JSON patch reads negative array indexes from the end, refuses an index
// past the last item (or, to add, past the end) and tests a member
// missing from an existing object as null, as the real server does
// (compared with it by e2e TestWatchtestWritesMatchRealServer).
func TestJSONPatchNegativeIndexAndNull(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"cfg","namespace":"prod","finalizers":["a/1","a/2","a/3"]}}`)
	for _, tc := range []struct {
		patch string
		code  int
		want  string
	}{
		{`[{"op":"test","path":"/metadata/finalizers/-1","value":"a/3"}]`, 200, `["a/1","a/2","a/3"]`},
		{`[{"op":"add","path":"/metadata/finalizers/-1","value":"x/1"}]`, 200, `["a/1","a/2","a/3","x/1"]`},
		{`[{"op":"replace","path":"/metadata/finalizers/-1","value":"y/1"}]`, 200, `["a/1","a/2","a/3","y/1"]`},
		{`[{"op":"remove","path":"/metadata/finalizers/-1"}]`, 200, `["a/1","a/2","a/3"]`},
		{`[{"op":"remove","path":"/metadata/finalizers/-9"}]`, 422, ""},
		{`[{"op":"replace","path":"/metadata/finalizers/3","value":"z/1"}]`, 422, ""},
		{`[{"op":"test","path":"/metadata/finalizers/3","value":"z/1"}]`, 422, ""},
		{`[{"op":"add","path":"/metadata/finalizers/4","value":"z/1"}]`, 422, ""},
		{`[{"op":"test","path":"/data","value":null}]`, 200, `["a/1","a/2","a/3"]`},
		{`[{"op":"test","path":"/data/k","value":null}]`, 422, ""},
		{`[{"op":"add","path":"/metadata/finalizers/3","value":"z/1"}]`, 200, `["a/1","a/2","a/3","z/1"]`},
	} {
		code, body := send(t, s, http.MethodPatch, "/api/v1/namespaces/prod/configmaps/cfg", jsonPatchType, tc.patch)
		require.Equal(t, tc.code, code, "%s: %s", tc.patch, body)
		if tc.want != "" {
			assert.JSONEq(t, tc.want, gjson.GetBytes(body, "metadata.finalizers").Raw, tc.patch)
		}
	}
}

// The directives kubectl sends beside a strategic merge patch's fields are
// applied, never stored (compared with kube-apiserver by e2e
// TestWatchtestWritesMatchRealServer).
func TestStrategicMergeDirectives(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"d","namespace":"prod","finalizers":["a.io/x","b.io/y"]},"spec":{"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1}},"template":{"spec":{"containers":[{"name":"a","image":"a"},{"name":"b","image":"b"},{"name":"c","image":"c"}]}}}}`)
	code, body := send(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/prod/deployments/d", smpType, `{
		"metadata":{"$deleteFromPrimitiveList/finalizers":["b.io/y"]},
		"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"},
			"template":{"spec":{"$setElementOrder/containers":[{"name":"c"},{"name":"a"},{"name":"b"}],"containers":[{"name":"a","image":"a:2"}]}}}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	got := gjson.ParseBytes(body)
	assert.JSONEq(t, `["a.io/x"]`, got.Get("metadata.finalizers").Raw)
	assert.JSONEq(t, `{"type":"Recreate"}`, got.Get("spec.strategy").Raw)
	assert.JSONEq(t, `["c","a","b"]`, got.Get("spec.template.spec.containers.#.name").Raw)
	assert.Equal(t, "a:2", got.Get(`spec.template.spec.containers.#(name=="a").image`).String())
	assert.NotContains(t, string(body), "$", "no directive is stored")
}
