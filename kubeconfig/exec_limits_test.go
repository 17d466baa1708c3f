package kubeconfig

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/stretchr/testify/require"
)

// These tests run shell scripts as plugins: the misbehaviour under test
// (a background child keeping stdout open, endless output) is what shell
// plugins do by accident.

const expiredCredential = `{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",` +
	`"status":{"token":"tok","expirationTimestamp":"2000-01-01T00:00:00Z"}}`

// shellPlugin writes script to an executable file and returns an ExecConfig
// running it.
func shellPlugin(t *testing.T, script string) *ExecConfig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plugin.sh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+script), 0o700))
	return &ExecConfig{Command: path, APIVersion: ExecAPIVersionV1}
}

// processGone reports whether pid has exited (a zombie counts: nothing
// reaps orphans in some containers).
func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

// A plugin that leaves a child holding its stdout must neither wedge the run
// nor the requests behind it.
func TestExecChildHoldingStdout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := shellPlugin(t, "printf '%s' '"+expiredCredential+"'\n"+
		"sleep 100000 &\necho $! > "+pidFile+"\nexit 0\n")
	// The credential has expired on arrival, so every call runs the plugin.
	a := newExecAuth(cfg, nil, clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	a.waitDelay = 10 * time.Millisecond

	for run := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := a.credential(ctx)
		cancel()
		require.NoError(t, err, "run %d", run)
		require.Equal(t, "Bearer tok", c.authorization)

		requireGone(t, pidFile)
	}
}

// requireGone waits for the process whose pid the plugin wrote to pidFile to
// be gone: a plugin's children die with it.
func requireGone(t *testing.T, pidFile string) {
	t.Helper()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return // cannot tell without /proc
	}
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return processGone(pid) }, 10*time.Second, 5*time.Millisecond,
		"the plugin's child is killed with its process group")
}

// A plugin that never finishes is killed at the run's timeout, with its
// children, and the next request starts a fresh run. On a loaded machine the
// shell may be killed before it started its child; such a run proves nothing
// about children, so the test lengthens the timeout and runs again (bounded).
func TestExecRunTimeout(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child")
	cfg := shellPlugin(t, "sleep 100000 &\necho $! > "+pidFile+"\nwait\n")
	a := newExecAuth(cfg, nil, clock.Real)
	a.timeout, a.waitDelay = 50*time.Millisecond, 10*time.Millisecond
	for killed, runs := 0, 0; killed < 2; runs++ {
		require.Less(t, runs, 8, "the plugin never started its child within %v", a.timeout)
		_ = os.Remove(pidFile)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := a.credential(ctx)
		require.NoError(t, ctx.Err(), "the run ended, not the caller's wait")
		cancel()
		require.ErrorContains(t, err, fmt.Sprintf("did not finish within %v", a.timeout))
		if b, _ := os.ReadFile(pidFile); !strings.HasSuffix(string(b), "\n") {
			a.timeout *= 2
			continue
		}
		requireGone(t, pidFile)
		killed++
	}
}

// Plugin output is read up to a cap.
func TestExecOutputCap(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"large then exit", "head -c 3000000 /dev/zero | tr '\\0' ' '\nprintf '%s' '" + expiredCredential + "'\n"},
		{"endless", "exec yes\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newExecAuth(shellPlugin(t, tt.script), nil, clock.Real)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, err := a.credential(ctx)
			require.ErrorContains(t, err, "printed more than 1 MiB")
		})
	}
}
