package patch_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/watchtest"
)

// SecretData and SecretStringData base64-encode each value, keys sorted,
// any bytes and any key (dots, quotes) included, and an empty map is {}.
func TestSecretDataIsBase64(t *testing.T) {
	bin := []byte{0, 1, 2, 0xff, '"', '\n'}
	for _, tc := range []struct {
		name  string
		build func(*patch.Builder) *patch.Builder
		want  string
	}{
		{"bytes", func(b *patch.Builder) *patch.Builder {
			return b.SecretData(map[string][]byte{"tls.key": bin, "a": []byte("x")})
		}, `{"data":{"a":"eA==","tls.key":"` + base64.StdEncoding.EncodeToString(bin) + `"}}`},
		{"strings", func(b *patch.Builder) *patch.Builder {
			return b.SecretStringData(map[string]string{`say "hi"`: "héllo\n", "b": ""})
		}, `{"data":{"b":"","say \"hi\"":"` + base64.StdEncoding.EncodeToString([]byte("héllo\n")) + `"}}`},
		{"nil", func(b *patch.Builder) *patch.Builder { return b.SecretData(nil) }, `{"data":{}}`},
		{"empty", func(b *patch.Builder) *patch.Builder { return b.SecretStringData(map[string]string{}) }, `{"data":{}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.build(patch.New()).Bytes()
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(body))
			assert.Equal(t, tc.want, string(body), "keys sorted, no spaces")
			var decoded struct{ Data map[string][]byte } // encoding/json reads base64 back
			require.NoError(t, json.Unmarshal(body, &decoded))
		})
	}
}

// A Secret applied with SecretData, and merged with SecretStringData,
// reads back from the server as the bytes given.
func TestSecretDataRoundTrip(t *testing.T) {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Secrets, watchtest.Definition{})
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	secrets := client.Resource(watchtest.Secrets).Namespace("ns")
	ctx := context.Background()

	bin := []byte{0, 0xfe, 0xff}
	body, err := patch.Object("v1", "Secret", "ns", "creds").SecretData(map[string][]byte{"key": bin}).Bytes()
	require.NoError(t, err)
	_, err = secrets.Apply(ctx, body, httpwatch.WriteOptions{FieldManager: "t"})
	require.NoError(t, err)
	merge, err := patch.New().SecretStringData(map[string]string{"user": "admin"}).Bytes()
	require.NoError(t, err)
	got, err := secrets.Patch(ctx, "creds", httpwatch.MergePatch, merge)
	require.NoError(t, err)

	var secret struct{ Data map[string][]byte }
	require.NoError(t, got.Decode(&secret))
	assert.Equal(t, map[string][]byte{"key": bin, "user": []byte("admin")}, secret.Data)
}
