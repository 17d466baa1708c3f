package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/watchtest"
)

// A patch's media type is recorded, and matched by a Failure, without the
// parameters of its Content-Type, so a client adding "; charset=utf-8"
// still meets the fault aimed at its patch type (decision 7).
func TestPatchTypeIsTheMediaTypeWithoutParameters(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"}}`)
	s.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable, PatchTypes: []string{mergeType}})
	code, body := send(t, s, http.MethodPatch, cmPath+"a", mergeType+"; charset=utf-8", `{"data":{"k":"v"}}`)
	require.Equal(t, http.StatusServiceUnavailable, code, "the fault for merge patches: %s", body)
	code, body = send(t, s, http.MethodPatch, cmPath+"a", mergeType+";charset=utf-8", `{"data":{"k":"v"}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)

	var got []string
	for _, r := range s.Requests() {
		got = append(got, r.PatchType)
	}
	assert.Equal(t, []string{mergeType, mergeType}, got)
}
