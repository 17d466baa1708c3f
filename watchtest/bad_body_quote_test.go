package watchtest_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/watchtest"
)

// A 400 for a body that is not what the request needs quotes the body,
// whole up to 80 bytes and cut to 80 bytes and "..." beyond, so a test's
// failure shows what was sent without flooding its log (decision 7).
func TestBadBodyQuotedUpTo80Bytes(t *testing.T) {
	tests := []struct {
		name, body, quoted string
	}{
		{"79 bytes", strings.Repeat("x", 79), strings.Repeat("x", 79)},
		{"80 bytes", strings.Repeat("x", 80), strings.Repeat("x", 80)},
		{"81 bytes", strings.Repeat("x", 81), strings.Repeat("x", 80) + "..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newServer(t)
			mustCreate(t, s, watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"prod"}}`)
			code, body := send(t, s, http.MethodDelete, cmPath+"a", "application/json", tt.body)
			require.Equal(t, http.StatusBadRequest, code, "%s", body)
			assert.Equal(t, "the body of a delete must be a DeleteOptions object: "+tt.quoted, gjson.GetBytes(body, "message").String())
		})
	}
}
