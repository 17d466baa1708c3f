package cli_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/redact"
	"github.com/listwatch/listwatch/kubeconfig"
)

// A password in the server URL is never shown.
func TestServerPasswordHidden(t *testing.T) {
	const server = "https://admin:hunter2@k.example:6443"
	_, where, _, err := cli.Connect(t.Context(), &kubeconfig.Flags{Server: server}, nil)
	require.NoError(t, err)
	assert.Equal(t, "https://admin:xxxxx@k.example:6443", where)

	for _, e := range []error{
		&httpwatch.StatusError{Code: 401, Reason: "Unauthorized"},
		fmt.Errorf("dial: %w", syscall.ECONNREFUSED),
		errors.New("other"),
	} {
		assert.NotContains(t, cli.Explain(e, server).Error(), "hunter2")
	}
	assert.Equal(t, "<unparsable URL>", redact.URL("http://admin:hunter2@k:bad"))
	assert.Equal(t, "https://k.example:6443", redact.URL("https://k.example:6443"))
}
