package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// An apply that creates an object may name its namespace in the body; it
// must then be the one in the URL. A cluster-scoped object's namespace is
// not checked.
func TestApplyCreateChecksBodyNamespace(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name, path, body string
		code             int
		wantBody         string
		namespace        string
	}{
		{"same namespace", "/api/v1/namespaces/prod/configmaps/a",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","namespace":"prod"},"data":{"k":"v"}}`, http.StatusCreated, "", "prod"},
		{"no namespace", "/api/v1/namespaces/prod/configmaps/b",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"data":{"k":"v"}}`, http.StatusCreated, "", "prod"},
		{"another namespace", "/api/v1/namespaces/prod/configmaps/c",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"dev"},"data":{"k":"v"}}`, http.StatusBadRequest,
			`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the namespace of the provided object does not match the namespace sent on the request","reason":"BadRequest","code":400}` + "\n", ""},
		{"cluster-scoped", "/api/v1/namespaces/n",
			`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n","namespace":"dev"}}`, http.StatusCreated, "", ""},
	}
	for _, tt := range tests {
		before := s.ResourceVersion()
		code, body := send(t, s, http.MethodPatch, tt.path+"?fieldManager=m", applyType, tt.body)
		require.Equal(t, tt.code, code, "%s: %s", tt.name, body)
		if tt.wantBody != "" {
			assert.Equal(t, tt.wantBody, string(body), tt.name)
			assert.Equal(t, before, s.ResourceVersion(), "%s: nothing is stored", tt.name)
			continue
		}
		ns := gjson.GetBytes(body, "metadata.namespace")
		assert.Equal(t, tt.namespace, ns.String(), tt.name)
		assert.Equal(t, tt.namespace != "", ns.Exists(), tt.name)
	}
}
