package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A password in --server shows in neither the banner nor the error.
func TestServerPasswordNotEchoed(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	t.Setenv("KUBECONFIG", "")
	for name, server := range map[string]string{
		"unreachable": "http://admin:hunter2@127.0.0.1:1",
		"bad port":    "http://admin:hunter2@127.0.0.1:bad-port",
		"bad scheme":  "ftp://admin:hunter2@127.0.0.1",
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var stdout, stderr strings.Builder
			err := run(ctx, []string{"--server", server}, &stdout, &stderr)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "hunter2")
			require.NotContains(t, stderr.String(), "hunter2")
			require.NotContains(t, stdout.String(), "hunter2")
		})
	}
}
