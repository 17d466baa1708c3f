package kubeconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A failing plugin's stderr is shown without the secrets in it: the token it printed, its environment values, anything shaped
// like a credential.
func TestExecStderrHidesSecrets(t *testing.T) {
	cfg := shellPlugin(t, `
printf '%s' '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"hunter2-stdout"}}'
echo "debug: token hunter2-stdout" >&2
echo "debug: secret $PLUGIN_SECRET" >&2
echo "debug: Authorization: Bearer hunter2.sent" >&2
echo 'debug: {"token": "hunter2-json"}' >&2
echo "fatal: cannot refresh" >&2
exit 1
`)
	cfg.Env = []ExecEnvVar{{"PLUGIN_SECRET", "hunter2-env"}}
	_, _, err := get(t, &Config{Host: "http://127.0.0.1:1", Exec: cfg})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
	require.Contains(t, err.Error(), "its stderr ends: debug: token "+redacted)
	require.Contains(t, err.Error(), "fatal: cannot refresh")
}
