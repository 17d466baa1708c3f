package watchtest_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// Creates with the same generateName get distinct names, and every create
// a distinct uid shaped like the real server's (a version 4 UUID), so a
// client can create many objects from one template.
func TestGeneratedNamesAndUIDsAreDistinct(t *testing.T) {
	s := newServer(t)
	names, uids := map[string]bool{}, map[string]bool{}
	for i, obj := range []string{
		`{"metadata":{"generateName":"job-"}}`,
		`{"metadata":{"name":"fixed"}}`,
		`{"metadata":{"generateName":"job-"}}`,
		`{"metadata":{"generateName":"job-"}}`,
	} {
		code, body := send(t, s, http.MethodPost, "/api/v1/namespaces/prod/configmaps", "application/json", obj)
		require.Equal(t, http.StatusCreated, code, "create %d: %s", i, body)
		name, uid := gjson.GetBytes(body, "metadata.name").String(), gjson.GetBytes(body, "metadata.uid").String()
		if i != 1 {
			assert.Regexp(t, `^job-[bcdfghjklmnpqrstvwxz2456789]{5}$`, name)
		}
		assert.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, uid)
		assert.False(t, names[name], "name %s given twice", name)
		assert.False(t, uids[uid], "uid %s given twice", uid)
		names[name], uids[uid] = true, true
	}
}
