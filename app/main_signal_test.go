package app_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/watchtest"
)

// SIGTERM to a process whose main is App.Main ends it cleanly within
// ShutdownTimeout: exit 0, its lease released, its snapshots saved. The
// test binary runs itself as the program. Decision 39.
func TestMainShutsDownOnSIGTERM(t *testing.T) {
	if args := os.Getenv("APP_TEST_MAIN_ARGS"); args != "" {
		os.Args = append([]string{"copier"}, strings.Fields(args)...)
		app.New("copier").Main(copierSetup)
		return
	}
	s := server(t, "a")
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainShutsDownOnSIGTERM$")
	cmd.Env = append(os.Environ(), "APP_TEST_MAIN_ARGS=--server "+s.URL+
		" --health-addr 127.0.0.1:0 --leader-elect --lease-namespace ns --identity child --snapshot-dir "+dir)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	exited := make(chan error, 1)
	leading := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for led := false; sc.Scan(); {
			if !led && strings.Contains(sc.Text(), "app: leader") && strings.Contains(sc.Text(), "self=true") {
				led = true
				close(leading)
			}
		}
		exited <- cmd.Wait()
	}()
	select {
	case <-leading:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the child did not lead within 30s")
	}
	require.Eventually(t, func() bool { _, ok := secretData(t, s, "a-copy"); return ok }, 10*time.Second, 5*time.Millisecond)

	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		require.NoError(t, err, "exit 0 after a clean shutdown")
	case <-time.After(app.DefaultShutdownTimeout):
		_ = cmd.Process.Kill()
		t.Fatalf("not stopped within the shutdown bound, %v", app.DefaultShutdownTimeout)
	}
	lease, err := s.Get(watchtest.Leases, "ns", "copier")
	require.NoError(t, err)
	assert.Empty(t, lease.Get("spec.holderIdentity").String(), "lease released")
	files, err := filepath.Glob(filepath.Join(dir, "*.snap"))
	require.NoError(t, err)
	assert.Len(t, files, 2, "a snapshot per cache")
}
