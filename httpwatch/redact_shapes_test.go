package httpwatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRedactCredentialShapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abc", "Authorization: Bearer " + redacted},
		{`{"Authorization":"Basic dTpw"}`, `{"Authorization":"Basic ` + redacted + `"}`},
		{"sent Bearer 0123456789abcdefXYZ", "sent Bearer " + redacted},
		{"Basic authentication failed", "Basic authentication failed"},
		{"bearer token required", "bearer token required"},
	} {
		require.Equal(t, tc.want, redactSecrets(tc.in, nil), tc.in)
	}
}
