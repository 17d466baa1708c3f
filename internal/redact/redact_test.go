package redact

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSecretsCredentialShapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Authorization: Bearer abc", "Authorization: Bearer " + Mark},
		{`{"Authorization":"Basic dTpw"}`, `{"Authorization":"Basic ` + Mark + `"}`},
		{"sent Bearer 0123456789abcdefXYZ", "sent Bearer " + Mark},
		{"Basic authentication failed", "Basic authentication failed"},
		{"bearer token required", "bearer token required"},
	} {
		require.Equal(t, tc.want, Secrets(tc.in, nil), tc.in)
	}
}
