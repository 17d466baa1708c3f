package httpwatch

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A StatusError names its request as RBAC does, the way the client's
// metrics name it: the verb from the method and whether an object is
// named, the resource with its group and subresource, the namespace.
func TestStatusErrorRequest(t *testing.T) {
	for _, tc := range []struct {
		verb, path          string
		want, res, inNamesp string
	}{
		{"PATCH", "/api/v1/namespaces/ns/configmaps/c", "patch", "configmaps", "ns"},
		{"GET", "/api/v1/namespaces/ns/pods", "list", "pods", "ns"},
		{"GET", "/apis/apps/v1/namespaces/ns/deployments/d/status", "get", "deployments.apps/status", "ns"},
		{"WATCH", "/api/v1/nodes", "watch", "nodes", ""},
		{"DELETE", "/apis/coordination.k8s.io/v1/namespaces/ns/leases", "deletecollection", "leases.coordination.k8s.io", "ns"},
		{"PUT", "/api/v1/namespaces/ns/status", "update", "namespaces/status", ""},
		{"POST", "/api/v1/namespaces", "create", "namespaces", ""},
		{"GET", "/version", "get", "", ""},
	} {
		verb, res, ns := (&StatusError{Verb: tc.verb, Path: tc.path}).Request()
		assert.Equal(t, []string{tc.want, tc.res, tc.inNamesp}, []string{verb, res, ns}, "%s %s", tc.verb, tc.path)
	}
}
