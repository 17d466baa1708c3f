package kubeconfig

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/require"
)

// runPlugin runs script as a plugin once and returns its error.
func runPlugin(t *testing.T, script string) error {
	t.Helper()
	a := newExecAuth(shellPlugin(t, script), nil, clock.Real)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := a.credential(ctx)
	return err
}

// The errors of a plugin's answer quote none of what it returned: not a
// malformed expirationTimestamp (which may be the token itself), not a
// kind or apiVersion holding a credential, not a credential-shaped run
// its stderr shows, even when the kept tail cuts a token in two.
func TestExecErrorsQuoteNoSecret(t *testing.T) {
	const token = "hunter2hunter2hunter2hunter2hunter2"
	cred := func(status string) string {
		return "printf '%s' '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\",\"status\":{" + status + "}}'\n"
	}
	tests := []struct {
		name, script, want string
	}{
		{"expirationTimestamp is the token",
			cred(`"token":"` + token + `","expirationTimestamp":"` + token + `"`),
			"expirationTimestamp is not an RFC 3339 time"},
		{"kind is a token",
			"printf '%s' '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"" + token + "\",\"status\":{\"token\":\"" + token + "\"}}'\n",
			"printed kind"},
		{"hex token in stderr",
			"echo 'refresh failed, cached token 4f9c2e8a1b7d3e6f0a9c8b7d6e5f4a3b2c1d0e9f' >&2\nexit 1\n",
			"refresh failed, cached token " + redacted},
		{"base64 token in stderr",
			"echo 'using aHVudGVyMmh1bnRlcjJodW50ZXIyaHVudGVyMg== now' >&2\nexit 1\n",
			"using " + redacted + " now"},
		{"token cut by the stderr tail",
			"printf 'x%s\\n' '" + strings.Repeat("hunter2:", 12) + "' >&2\n" +
				"i=0; while [ $i -lt 44 ]; do echo 'line of forty-nine characters of plain filler' >&2; i=$((i+1)); done\nexit 1\n",
			"line of forty-nine characters"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := runPlugin(t, tt.script)
			require.ErrorContains(t, err, tt.want)
			require.NotContains(t, err.Error(), "hunter2")
			require.NotContains(t, err.Error(), "aHVudGVy")
			require.NotContains(t, err.Error(), "4f9c2e8a")
		})
	}
}

// Output of exactly the cap is read; one byte more is refused
// (a pin of the cap).
func TestExecOutputCapIsExact(t *testing.T) {
	for _, tt := range []struct {
		size    int
		refused bool
	}{{maxExecOutput, false}, {maxExecOutput + 1, true}} {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			pad := tt.size - len(validCredential)
			err := runPlugin(t, fmt.Sprintf("printf '%%s' '%s'\nhead -c %d /dev/zero | tr '\\0' ' '\n", validCredential, pad))
			if tt.refused {
				require.ErrorContains(t, err, "printed more than 1 MiB")
			} else {
				require.NoError(t, err)
			}
		})
	}
}

const validCredential = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok"}}`
