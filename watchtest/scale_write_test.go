package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// A Scale written to the scale subresource names the object of the URL or
// none, as the real server checks for every update; and zero replicas is
// a valid size, the one a controller scales down to.
func TestScaleWriteChecksNameAndTakesZero(t *testing.T) {
	s := newServer(t)
	mustCreate(t, s, watchtest.Deployments, deployment)

	code, body := send(t, s, http.MethodPut, depPath+"d/scale", "application/json", `{"metadata":{"name":"other"},"spec":{"replicas":6}}`)
	assert.Equal(t, http.StatusBadRequest, code, "%s", body)
	assert.Equal(t, "the name of the object (other) does not match the name on the URL (d)", gjson.GetBytes(body, "message").String())

	code, body = send(t, s, http.MethodPut, depPath+"d/scale", "application/json", `{"spec":{"replicas":0}}`)
	require.Equal(t, http.StatusOK, code, "%s", body)
	assert.Equal(t, "{}", gjson.GetBytes(body, "spec").Raw, "autoscaling/v1 omits zero replicas")
	d, err := s.Get(watchtest.Deployments, "prod", "d")
	require.NoError(t, err)
	assert.Equal(t, "0", gjson.GetBytes(d.Raw(), "spec.replicas").Raw, "the deployment is scaled to zero")
}
