package watchtest_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// Decision 40: every write over HTTP records metadata.managedFields as the
// real server does — the manager (fieldManager, else the User-Agent's
// product), operation Update or Apply, apiVersion, time, FieldsV1 — and a
// later apply conflicts with the fields a create or update set. Writes
// from Go leave objects without entries.
func TestManagedFieldsOnEveryWrite(t *testing.T) {
	s := newServer(t)
	asJSON := map[string]string{"Content-Type": "application/json"}
	code, body, _ := sendH(t, s, http.MethodPost, "/api/v1/namespaces/ns/configmaps?fieldManager=kubectl-create",
		`{"metadata":{"name":"c","labels":{"a":"1"},"managedFields":[{"manager":"forged"}]},"data":{"k":"v"}}`, asJSON)
	require.Equal(t, http.StatusCreated, code, string(body))
	mf := gjson.GetBytes(body, "metadata.managedFields")
	require.Len(t, mf.Array(), 1)
	e := mf.Get("0")
	require.Equal(t, "kubectl-create", e.Get("manager").String())
	require.Equal(t, "Update", e.Get("operation").String())
	require.Equal(t, "v1", e.Get("apiVersion").String())
	require.Equal(t, gjson.GetBytes(body, "metadata.creationTimestamp").String(), e.Get("time").String())
	require.Equal(t, "FieldsV1", e.Get("fieldsType").String())
	require.JSONEq(t, `{"f:data":{".":{},"f:k":{}},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`, e.Get("fieldsV1").Raw)

	code, body, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c", `{"metadata":{"labels":{"b":"2"}}}`,
		map[string]string{"Content-Type": "application/merge-patch+json", "User-Agent": "kubectl/v1.37.2 (linux/amd64) kubernetes/abcdef"})
	require.Equal(t, http.StatusOK, code, string(body))
	mf = gjson.GetBytes(body, "metadata.managedFields")
	require.Equal(t, `["kubectl","kubectl-create"]`, mf.Get("#.manager").Raw)
	require.JSONEq(t, `{"f:metadata":{"f:labels":{"f:b":{}}}}`, mf.Get("0.fieldsV1").Raw)

	code, body, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c?fieldManager=applier",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"w"}}`, map[string]string{"Content-Type": "application/apply-patch+yaml"})
	require.Equal(t, http.StatusConflict, code)
	require.Equal(t, `Apply failed with 1 conflict: conflict with "kubectl-create" using v1: .data.k`, gjson.GetBytes(body, "message").String())

	code, body, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c?fieldManager=applier&force=true",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"w"}}`, map[string]string{"Content-Type": "application/apply-patch+yaml"})
	require.Equal(t, http.StatusOK, code, string(body))
	mf = gjson.GetBytes(body, "metadata.managedFields")
	require.Equal(t, `["Apply","Update","Update"]`, mf.Get("#.operation").Raw, "Apply entries first")
	require.JSONEq(t, `{"f:data":{"f:k":{}}}`, mf.Get(`#(manager=="applier").fieldsV1`).Raw)
	require.JSONEq(t, `{"f:data":{},"f:metadata":{"f:labels":{".":{},"f:a":{}}}}`, mf.Get(`#(manager=="kubectl-create").fieldsV1`).Raw, "a map owned without its children is {}")

	// A deployment's keyed lists are written item by item, a status write
	// under its subresource.
	code, body, _ = sendH(t, s, http.MethodPost, "/apis/apps/v1/namespaces/ns/deployments",
		`{"metadata":{"name":"d","finalizers":["x/y"]},"spec":{"template":{"spec":{"containers":[{"name":"n","image":"nginx","args":["a"]}]}}}}`, asJSON)
	require.Equal(t, http.StatusCreated, code, string(body))
	require.JSONEq(t, `{"f:metadata":{"f:finalizers":{"v:\"x/y\"":{}}},"f:spec":{"f:template":{"f:spec":{"f:containers":{"k:{\"name\":\"n\"}":{".":{},"f:args":{},"f:image":{},"f:name":{}}}}}}}`,
		gjson.GetBytes(body, "metadata.managedFields.0.fieldsV1").Raw)
	require.Equal(t, "apps/v1", gjson.GetBytes(body, "metadata.managedFields.0.apiVersion").String())
	require.Equal(t, "Go-http-client", gjson.GetBytes(body, "metadata.managedFields.0.manager").String())
	code, body, _ = sendH(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/d/status?fieldManager=ctl",
		`{"status":{"replicas":1}}`, map[string]string{"Content-Type": "application/merge-patch+json"})
	require.Equal(t, http.StatusOK, code, string(body))
	st := gjson.GetBytes(body, `metadata.managedFields.#(manager=="ctl")`)
	require.Equal(t, "status", st.Get("subresource").String())
	require.JSONEq(t, `{"f:status":{"f:replicas":{}}}`, st.Get("fieldsV1").Raw)

	// A write that changes nothing records nothing and keeps the version.
	before := gjson.GetBytes(body, "metadata").Raw
	code, body, _ = sendH(t, s, http.MethodPatch, "/apis/apps/v1/namespaces/ns/deployments/d?fieldManager=other",
		`{"metadata":{"finalizers":["x/y"]}}`, map[string]string{"Content-Type": "application/merge-patch+json"})
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, before, gjson.GetBytes(body, "metadata").Raw)

	o := mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"seed","namespace":"ns"},"data":{"k":"v"}}`)
	require.False(t, o.Get("metadata.managedFields").Exists(), "a seed from Go records no manager")
}

// Decision 40: kubectl's server-side apply takes over, without conflict,
// what kubectl's client-side apply set and its last-applied annotation
// still holds, as the real server upgrades an object; another manager,
// or a field changed since, still conflicts.
func TestServerSideApplyUpgradesClientSideApply(t *testing.T) {
	s := newServer(t)
	last := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"ns"},"data":{"a":"1","b":"2"}}`
	code, body, _ := sendH(t, s, http.MethodPost, "/api/v1/namespaces/ns/configmaps?fieldManager=kubectl-client-side-apply",
		`{"metadata":{"name":"c","annotations":{"kubectl.kubernetes.io/last-applied-configuration":`+quote(last)+`}},"data":{"a":"1","b":"2"}}`, nil)
	require.Equal(t, http.StatusCreated, code, string(body))
	code, _, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c?fieldManager=kubectl-edit", `{"data":{"b":"3"}}`,
		map[string]string{"Content-Type": "application/merge-patch+json"})
	require.Equal(t, http.StatusOK, code)
	apply := func(manager, data string) (int, []byte) {
		code, body, _ := sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c?fieldManager="+manager,
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":`+data+`}`, map[string]string{"Content-Type": "application/apply-patch+yaml"})
		return code, body
	}
	code, body = apply("other", `{"a":"9"}`)
	require.Equal(t, http.StatusConflict, code, "only kubectl upgrades: %s", body)
	code, body = apply("kubectl", `{"b":"9"}`)
	require.Equal(t, http.StatusConflict, code, "b changed since it was applied: %s", body)
	require.Contains(t, gjson.GetBytes(body, "message").String(), `conflict with "kubectl-edit"`)
	code, body = apply("kubectl", `{"a":"9"}`)
	require.Equal(t, http.StatusOK, code, string(body))
	require.JSONEq(t, `{"f:data":{"f:a":{}}}`, gjson.GetBytes(body, `metadata.managedFields.#(manager=="kubectl").fieldsV1`).Raw)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Decision 40: managedFields a write sends, different from the stored
// ones, are the ownership it starts from, as on the real server: kubectl
// rewrites client-side apply's entry as its own Apply entry before its
// first server-side apply, which then removes what it no longer applies.
func TestSentManagedFieldsAreTaken(t *testing.T) {
	s := newServer(t)
	code, body, _ := sendH(t, s, http.MethodPost, "/api/v1/namespaces/ns/configmaps?fieldManager=kubectl-client-side-apply",
		`{"metadata":{"name":"c"},"data":{"a":"1","b":"2"}}`, nil)
	require.Equal(t, http.StatusCreated, code, string(body))
	rv := gjson.GetBytes(body, "metadata.resourceVersion").String()
	entry := `[{"manager":"kubectl","operation":"Apply","apiVersion":"v1","time":"2026-01-01T00:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:a":{},"f:b":{}}}}]`
	code, body, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c",
		`[{"op":"replace","path":"/metadata/managedFields","value":`+entry+`},{"op":"replace","path":"/metadata/resourceVersion","value":"`+rv+`"}]`,
		map[string]string{"Content-Type": "application/json-patch+json"})
	require.Equal(t, http.StatusOK, code, string(body))
	require.NotEqual(t, rv, gjson.GetBytes(body, "metadata.resourceVersion").String(), "a change of managedFields alone is a write")
	require.JSONEq(t, entry, gjson.GetBytes(body, "metadata.managedFields").Raw)

	code, body, _ = sendH(t, s, http.MethodPatch, "/api/v1/namespaces/ns/configmaps/c?fieldManager=kubectl",
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"9"}}`, map[string]string{"Content-Type": "application/apply-patch+yaml"})
	require.Equal(t, http.StatusOK, code, string(body))
	require.JSONEq(t, `{"a":"9"}`, gjson.GetBytes(body, "data").Raw, "b, no longer applied and no one else's, is gone")
}
