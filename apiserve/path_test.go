package apiserve_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/apiserve"
)

// decision 40: one reading of a resource path serves watchtest and
// cacheserve alike; any other shape is the real server's 404.
func TestParsePath(t *testing.T) {
	for path, want := range map[string]apiserve.Path{
		"/api/v1/pods":                                         {Version: "v1", Resource: "pods"},
		"/api/v1/namespaces/ns/pods/p":                         {Version: "v1", Namespace: "ns", Resource: "pods", Name: "p"},
		"/api/v1/namespaces/ns/pods/p/status":                  {Version: "v1", Namespace: "ns", Resource: "pods", Name: "p", Subresource: "status"},
		"/apis/apps/v1/deployments/d/scale":                    {Group: "apps", Version: "v1", Resource: "deployments", Name: "d", Subresource: "scale"},
		"/api/v1/namespaces":                                   {Version: "v1", Resource: "namespaces"},
		"/api/v1/namespaces/ns":                                {Version: "v1", Resource: "namespaces", Name: "ns"},
		"/apis/coordination.k8s.io/v1/namespaces/ns/leases/l/": {Group: "coordination.k8s.io", Version: "v1", Namespace: "ns", Resource: "leases", Name: "l"},
	} {
		got, err := apiserve.ParsePath(path)
		require.Nil(t, err, path)
		assert.Equal(t, want, got, path)
	}
	for _, path := range []string{"/api/v1", "/apis/apps", "/version", "/api/v1/namespaces/ns/pods/p/status/x", "/api/v1/pods/p/status/x"} {
		_, err := apiserve.ParsePath(path)
		require.NotNil(t, err, path)
		assert.Equal(t, http.StatusNotFound, err.Code, path)
	}
}
