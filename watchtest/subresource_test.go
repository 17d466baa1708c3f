package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

const depPath = "/apis/apps/v1/namespaces/prod/deployments/"

const deployment = `{"metadata":{"name":"d","namespace":"prod","labels":{"a":"1"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}}},"status":{"replicas":5}}`

// The status subresource splits an object as the real server's status
// strategies do: a status write changes .status and, for a built-in
// resource, metadata (but not an apps resource's labels), never spec; a
// custom resource's status write changes .status only. Other writes leave
// .status alone, and a create over HTTP drops it (decision 7).
func TestStatusSubresource(t *testing.T) {
	s := newServer(t)
	code, body := send(t, s, http.MethodPost, "/apis/apps/v1/namespaces/prod/deployments", "application/json", deployment)
	require.Equal(t, http.StatusCreated, code, "%s", body)
	assert.False(t, gjson.GetBytes(body, "status").Exists(), "a create ignores status")
	mustCreate(t, s, watchtest.Pods, `{"metadata":{"name":"p","namespace":"prod","labels":{"a":"1"}},"spec":{"nodeName":"n1"}}`)
	gizmos := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	s.AddResource(gizmos, watchtest.Definition{Kind: "Gizmo", Namespaced: true, Status: true})
	mustCreate(t, s, gizmos, `{"metadata":{"name":"g","namespace":"prod","labels":{"a":"1"}},"spec":{"size":1}}`)
	podPath, gizmoPath := "/api/v1/namespaces/prod/pods/p", "/apis/example.com/v1/namespaces/prod/gizmos/g"

	tests := []struct {
		name, method, path, ct, body string
		labels, annotations          string
		spec, status                 string // gjson paths "spec" and "status", raw
		generation                   int64
	}{
		{"deployment status put", http.MethodPut, depPath + "d/status", "application/json",
			`{"metadata":{"name":"d","labels":{"a":"2"},"annotations":{"x":"y"}},"spec":{"replicas":7},"status":{"replicas":3}}`,
			`{"a":"1"}`, `{"x":"y"}`, `{"replicas":2,"selector":{"matchLabels":{"app":"d"}}}`, `{"replicas":3}`, 1},
		{"deployment status patch", http.MethodPatch, depPath + "d/status", mergeType,
			`{"metadata":{"labels":{"b":"3"},"annotations":{"x":"z"}},"spec":{"replicas":9},"status":{"readyReplicas":1}}`,
			`{"a":"1"}`, `{"x":"z"}`, `{"replicas":2,"selector":{"matchLabels":{"app":"d"}}}`, `{"replicas":3,"readyReplicas":1}`, 1},
		{"deployment patch ignores status", http.MethodPatch, depPath + "d", mergeType,
			`{"spec":{"replicas":4},"status":{"readyReplicas":2}}`,
			`{"a":"1"}`, `{"x":"z"}`, `{"replicas":4,"selector":{"matchLabels":{"app":"d"}}}`, `{"replicas":3,"readyReplicas":1}`, 2},
		{"deployment put ignores status", http.MethodPut, depPath + "d", "application/json",
			`{"metadata":{"name":"d","labels":{"a":"3"}},"spec":{"replicas":4},"status":{}}`,
			`{"a":"3"}`, ``, `{"replicas":4}`, `{"replicas":3,"readyReplicas":1}`, 3},
		{"pod status patch changes labels", http.MethodPatch, podPath + "/status", mergeType,
			`{"metadata":{"labels":{"b":"3"}},"spec":{"nodeName":"n2"},"status":{"phase":"Running"}}`,
			`{"a":"1","b":"3"}`, ``, `{"nodeName":"n1"}`, `{"phase":"Running"}`, 1},
		{"custom resource status put changes status only", http.MethodPut, gizmoPath + "/status", "application/json",
			`{"metadata":{"name":"g","labels":{"a":"2"},"annotations":{"x":"y"}},"spec":{"size":3},"status":{"ready":true}}`,
			`{"a":"1"}`, ``, `{"size":1}`, `{"ready":true}`, 1},
	}
	for _, tt := range tests {
		code, body := send(t, s, tt.method, tt.path, tt.ct, tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %s", tt.name, body)
		got := gjson.ParseBytes(body)
		assert.Equal(t, tt.labels, got.Get("metadata.labels").Raw, tt.name)
		assert.Equal(t, tt.annotations, got.Get("metadata.annotations").Raw, tt.name)
		assert.JSONEq(t, tt.spec, got.Get("spec").Raw, tt.name)
		assert.JSONEq(t, tt.status, got.Get("status").Raw, tt.name)
		assert.Equal(t, tt.generation, got.Get("metadata.generation").Int(), tt.name)
	}
	code, body = get(t, s, depPath+"d/status")
	require.Equal(t, http.StatusOK, code)
	assert.Equal(t, "Deployment", gjson.GetBytes(body, "kind").String(), "GET status is the whole object")

	// Go's Create seeds whole objects, status included.
	o := mustCreate(t, s, watchtest.Deployments, `{"metadata":{"name":"seeded","namespace":"prod"},"status":{"replicas":1}}`)
	assert.Equal(t, `{"replicas":1}`, o.Get("status").Raw)

	for _, p := range []string{"/api/v1/namespaces/prod/configmaps/x/status", "/api/v1/namespaces/prod/configmaps/x/scale", depPath + "d/nope"} {
		code, body = get(t, s, p)
		assert.Equal(t, http.StatusNotFound, code, p)
		assert.Equal(t, string(fixture(t, "list-unknown-resource.json")), string(body), p)
	}
	code, _ = send(t, s, http.MethodDelete, depPath+"d/status", "", "")
	assert.Equal(t, http.StatusMethodNotAllowed, code)
}

func TestScaleSubresource(t *testing.T) {
	s := newServer(t)
	d := mustCreate(t, s, watchtest.Deployments, deployment)
	code, body := get(t, s, depPath+"d/scale")
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d","namespace":"prod","uid":"`+d.Get("metadata.uid").String()+`","resourceVersion":"`+rvOf(d)+`","creationTimestamp":"`+d.Get("metadata.creationTimestamp").String()+`"},"spec":{"replicas":2},"status":{"replicas":5,"selector":"app=d"}}`+"\n", string(body))

	w := openWatch(t, s, "/apis/apps/v1/namespaces/prod/deployments?watch=1&resourceVersion="+rvOf(d))
	code, body = send(t, s, http.MethodPut, depPath+"d/scale", "application/json", `{"kind":"Scale","apiVersion":"autoscaling/v1","metadata":{"name":"d"},"spec":{"replicas":6}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, int64(6), gjson.GetBytes(body, "spec.replicas").Int())
	e := w.next()
	assert.Equal(t, "MODIFIED d "+gjson.GetBytes(body, "metadata.resourceVersion").String(), e.String())
	assert.Equal(t, "6", e.get("spec.replicas"))
	assert.Equal(t, "2", e.get("metadata.generation"), "scaling changes the spec")

	code, body = send(t, s, http.MethodPatch, depPath+"d/scale", mergeType, `{"spec":{"replicas":3}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, int64(3), gjson.GetBytes(body, "spec.replicas").Int())

	code, body = send(t, s, http.MethodPut, depPath+"d/scale", "application/json", `{"metadata":{"name":"d","resourceVersion":"2"},"spec":{"replicas":6}}`)
	assert.Equal(t, http.StatusConflict, code)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on deployments.apps \"d\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"d","group":"apps","kind":"deployments"},"code":409}`+"\n", string(body))

	code, body = get(t, s, depPath+"nope/scale")
	assert.Equal(t, http.StatusNotFound, code)
	assert.Equal(t, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \"nope\" not found","reason":"NotFound","details":{"name":"nope","group":"apps","kind":"deployments"},"code":404}`+"\n", string(body))

	// A custom resource declares its scale paths as its definition would.
	gizmos := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gizmos"}
	s.AddResource(gizmos, watchtest.Definition{Kind: "Gizmo", Namespaced: true, Status: true,
		Scale: watchtest.ScalePaths{SpecReplicasPath: ".spec.count", StatusReplicasPath: ".status.count", LabelSelectorPath: ".status.selector"}})
	mustCreate(t, s, gizmos, `{"metadata":{"name":"g","namespace":"prod"},"status":{"count":1,"selector":"a=1"}}`)
	code, body = send(t, s, http.MethodPatch, "/apis/example.com/v1/namespaces/prod/gizmos/g/scale", mergeType, `{"spec":{"replicas":4}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.JSONEq(t, `{"replicas":1,"selector":"a=1"}`, gjson.GetBytes(body, "status").Raw)
	g, err := s.Get(gizmos, "prod", "g")
	require.NoError(t, err)
	assert.Equal(t, `{"count":4}`, g.Get("spec").Raw, "the scale writes its path, creating the objects on the way")
}
