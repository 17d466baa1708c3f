package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The examples/watch binary, built and run against the real server, prints
// one line per change after its initial sync and exits after --events.
func TestExampleWatchBinary(t *testing.T) {
	cfg := config(t)
	c := client(t)
	ns := namespace(t, c)
	bin := filepath.Join(t.TempDir(), "watch")
	build := exec.Command("go", "build", "-o", bin, "../examples/watch")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	ctx := ctxTimeout(t, wait)
	cmd := exec.CommandContext(ctx, bin, "--server", cfg.Host, "--token-file", tokenFile(t, cfg.BearerToken), "--ca", cfg.CAFile,
		"--resource", "configmaps", "-n", ns, "--events", "2")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	require.NoError(t, cmd.Start())

	// Change objects only once the binary says it is synced.
	lines := bufio.NewScanner(stderr)
	var log []string
	for lines.Scan() {
		log = append(log, lines.Text())
		if strings.HasPrefix(lines.Text(), "synced ") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	rc := c.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: ns})
	for i := range 2 {
		_, err := rc.Create(context.Background(), configMap(ns, fmt.Sprintf("seen-%d", i), "x"))
		require.NoError(t, err)
	}
	require.NoError(t, cmd.Wait(), "stderr so far: %v", log)
	assert.Contains(t, stdout.String(), "ADDED     "+ns+"/seen-0")
	assert.Contains(t, stdout.String(), "ADDED     "+ns+"/seen-1")
}

// A wrong token is one clear line and a non-zero exit.
func TestExampleWatchBadToken(t *testing.T) {
	cfg := config(t)
	out, err := exec.Command("go", "run", "../examples/watch", "--server", cfg.Host, "--token-file", tokenFile(t, "wrong"), "--ca", cfg.CAFile).CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "401 Unauthorized")
}

// tokenFile writes token to a file for --token-file: no flag takes a
// token itself.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(path, []byte(token), 0o600))
	return path
}
