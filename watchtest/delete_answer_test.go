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

// A delete that removes the object at once answers, as on the real
// server, with the object itself for core pods and namespaces and with a
// Success Status for everything else, a custom resource that happens to
// be called pods included (decision 7).
func TestDeleteAnswersWithTheObjectOnlyForCorePodsAndNamespaces(t *testing.T) {
	customPods := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "pods"}
	tests := []struct {
		name   string
		res    httpwatch.Resource
		obj    string
		path   string
		object bool // the answer is the deleted object, else a Status
	}{
		{"core pod", watchtest.Pods, podJSON("prod", "p", nil), "/api/v1/namespaces/prod/pods/p", true},
		{"namespace", watchtest.Namespaces, `{"metadata":{"name":"p"}}`, "/api/v1/namespaces/p", true},
		{"configmap", watchtest.ConfigMaps, `{"metadata":{"name":"p","namespace":"prod"}}`, "/api/v1/namespaces/prod/configmaps/p", false},
		{"custom resource named pods", customPods, `{"apiVersion":"example.com/v1","kind":"Pod","metadata":{"name":"p","namespace":"prod"}}`, "/apis/example.com/v1/namespaces/prod/pods/p", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			s.AddResource(customPods, watchtest.Definition{Kind: "Pod", Namespaced: true})
			uid := mustCreate(t, s, tt.res, tt.obj).Get("metadata.uid").String()
			code, body := send(t, s, http.MethodDelete, tt.path, "", "")
			require.Equal(t, http.StatusOK, code, "%s", body)
			got := gjson.ParseBytes(body)
			if tt.object {
				assert.Equal(t, "p", got.Get("metadata.name").String(), "%s", body)
				assert.Equal(t, uid, got.Get("metadata.uid").String(), "%s", body)
				assert.NotEqual(t, "Status", got.Get("kind").String(), "%s", body)
			} else {
				assert.Equal(t, "Status", got.Get("kind").String(), "%s", body)
				assert.Equal(t, "Success", got.Get("status").String(), "%s", body)
				assert.Equal(t, uid, got.Get("details.uid").String(), "%s", body)
			}
		})
	}
}
