package patch_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/patch"
)

const deployment = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"d-1"}}`

// An owned object is one line: its identity, and its owner as controller
// (controller and blockOwnerDeletion true); an owner without a uid, or in
// another namespace, is refused before anything is sent.
func TestObjectControlledBy(t *testing.T) {
	d := object(t, deployment)
	node := object(t, `{"apiVersion":"v1","kind":"Node","metadata":{"name":"n1","uid":"n-1"}}`)
	for _, tc := range []struct {
		name string
		b    *patch.Builder
		want string // "" when ErrOwner is wanted
	}{
		{"owned by a namespaced owner", patch.Object("v1", "ConfigMap", "shop", "web-summary").ControlledBy(d).Set("data.replicas", "3"),
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"web-summary","namespace":"shop","ownerReferences":[` +
				`{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d-1","controller":true,"blockOwnerDeletion":true}]},"data":{"replicas":"3"}}`},
		{"cluster-scoped owner, namespaced object", patch.Object("v1", "ConfigMap", "shop", "n1").ControlledBy(node),
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"n1","namespace":"shop","ownerReferences":[` +
				`{"apiVersion":"v1","kind":"Node","name":"n1","uid":"n-1","controller":true,"blockOwnerDeletion":true}]}}`},
		{"cluster-scoped object", patch.Object("example.com/v1", "Report", "", "r"),
			`{"apiVersion":"example.com/v1","kind":"Report","metadata":{"name":"r"}}`},
		{"owner in another namespace", patch.Object("v1", "ConfigMap", "other", "x").ControlledBy(d), ""},
		{"namespaced owner, cluster-scoped object", patch.Object("example.com/v1", "Report", "", "r").ControlledBy(d), ""},
		{"owner never read from the server", patch.Object("v1", "ConfigMap", "shop", "x").ControlledBy(object(t, `{"kind":"Deployment","metadata":{"name":"web","namespace":"shop"}}`)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.b.Bytes()
			if tc.want == "" {
				assert.True(t, errors.Is(err, patch.ErrOwner), "%v", err)
				return
			}
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			assert.Equal(t, tc.want, string(got), "members in the order set")
		})
	}
}
