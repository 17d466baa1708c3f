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

// A custom resource's generation compares what it counts as values, not
// as text: a write that re-encodes members written unsorted or escaped,
// beside top-level numbers and booleans, is not a new generation; a
// changed number is.
func TestCustomResourceGenerationComparesValues(t *testing.T) {
	s := newServer(t)
	gadgets := httpwatch.Resource{Group: "example.com", Version: "v1", Resource: "gadgets"}
	s.AddResource(gadgets, watchtest.Definition{Kind: "Gadget", Namespaced: true})
	mustCreate(t, s, gadgets, `{"metadata":{"name":"g","namespace":"prod"},"count":1,"enabled":true,"spec":{"b":"1","a":"\u0032"}}`)
	path := "/apis/example.com/v1/namespaces/prod/gadgets/g"
	for _, tt := range []struct {
		name, body string
		generation int64
	}{
		{"labels", `{"metadata":{"labels":{"l":"1"}}}`, 1},
		{"spec as it was", `{"spec":{"a":"2"}}`, 1},
		{"a number", `{"count":2}`, 2},
		{"a boolean", `{"enabled":false}`, 3},
		{"spec", `{"spec":{"a":"3"}}`, 4},
	} {
		code, body := send(t, s, http.MethodPatch, path, mergeType, tt.body)
		require.Equal(t, http.StatusOK, code, "%s: %s", tt.name, body)
		assert.Equal(t, tt.generation, gjson.GetBytes(body, "metadata.generation").Int(), tt.name)
	}
}
