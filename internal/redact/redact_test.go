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

// Opaque also cuts long hex and base64 runs, and leaves paths, words and
// short identifiers alone.
func TestOpaqueRuns(t *testing.T) {
	for in, want := range map[string]string{
		"token 4f9c2e8a1b7d3e6f0a9c8b7d6e5f4a3b2c1d0e9f.":                   "token " + Mark + ".",
		"token 4F9C2E8A1B7D3E6F0A9C8B7D6E5F4A3B":                            "token " + Mark,
		"key aHVudGVyMmh1bnRlcjJodW50ZXIyaHVudGVyMg== end":                  "key " + Mark + " end",
		"url-safe aHVudGVyMm_1bnRlcjJodW50ZXIyaHVudGVyMg-x end":             "url-safe " + Mark + " end",
		"short 4f9c2e8a1b7d3e6f":                                            "short 4f9c2e8a1b7d3e6f",
		"/usr/local/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin failed": "/usr/local/lib/google-cloud-sdk/bin/gke-gcloud-auth-plugin failed",
		"uid 0c6b9d1e-8f3a-4c2b-9e7d-5a1f2b3c4d5e":                          "uid 0c6b9d1e-8f3a-4c2b-9e7d-5a1f2b3c4d5e",
	} {
		require.Equal(t, want, Opaque(in, nil), in)
	}
}
