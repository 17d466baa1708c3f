package chaos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// killAPIServer kills the kube-apiserver scripts/realapi.sh started in
// e.dir, as a crash does (no drain), and waits until it is gone.
func (e *env) killAPIServer(t *testing.T) {
	t.Helper()
	pid, err := strconv.Atoi(e.read(t, "kube-apiserver.pid"))
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	require.Eventually(t, func() bool { return syscall.Kill(pid, 0) != nil }, wait, 50*time.Millisecond, "the killed kube-apiserver did not exit")
}

// startAPIServer starts the kube-apiserver again with the flags it had,
// and waits until it is ready.
func (e *env) startAPIServer(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(e.dir, "kube-apiserver.log"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	defer logf.Close()
	cmd := exec.Command(e.read(t, "apiserver.bin"), strings.Split(e.read(t, "apiserver.args"), "\n")...)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "kube-apiserver.pid"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644))
	go func() { _ = cmd.Wait() }() // reaped whenever scripts/realapi.sh stop ends it
	e.ready(t, 2*wait)
}

func (e *env) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dir, name))
	require.NoError(t, err)
	return strings.TrimSpace(string(b))
}
