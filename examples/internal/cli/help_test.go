package cli_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/kubeconfig"
)

// helpRun is a command as the examples write one: its flags, the
// connection flags, and nothing else.
func helpRun(_ context.Context, args []string, _, stderr io.Writer) error {
	var kf kubeconfig.Flags
	fs := cli.NewFlagSet("cmd", "cmd shows its help.", stderr)
	kf.Register(fs)
	fs.Int("events", 0, "a flag of its own")
	return cli.Parse(fs, args)
}

// A command run as a process exits 0 for --help and -h, after printing
// its usage with the connection flags, and 1 for a bad flag. The test
// binary runs itself as the command.
func TestMainHelpExitsZero(t *testing.T) {
	if args := os.Getenv("CLI_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"cmd"}, strings.Fields(args)...)
		cli.Main("cmd", helpRun)
		return
	}
	for _, tc := range []struct {
		args string
		code int
	}{{"--help", 0}, {"-h", 0}, {"--nope", 1}} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestMainHelpExitsZero$")
		cmd.Env = append(os.Environ(), "CLI_TEST_MAIN_ARGS="+tc.args)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, tc.code, code, "%s: %s", tc.args, stderr.String())
		assert.Contains(t, stderr.String(), "cmd shows its help.", tc.args)
		for _, flag := range []string{"-kubeconfig", "-context", "-server", "-token-file", "-ca"} {
			assert.Contains(t, stderr.String(), flag, tc.args)
		}
	}
}
