package snapshot

import (
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// writerEnv names the file a child process of TestKillWhileWriting writes.
const writerEnv = "SNAPSHOT_TEST_WRITER_PATH"

// TestMain lets the test binary be the writer that TestKillWhileWriting
// kills.
func TestMain(m *testing.M) {
	if path := os.Getenv(writerEnv); path != "" {
		writeForever(path)
	}
	goleak.VerifyTestMain(m)
}

// writeForever writes snapshots of 100 and 300 objects in turn, at
// versions "100" and "300", until it is killed.
func writeForever(path string) {
	var snaps []*Snapshot
	for _, n := range []int{100, 300} {
		objs, err := makeObjects(n)
		if err != nil {
			os.Exit(3)
		}
		snaps = append(snaps, &Snapshot{Key: testKey, ResourceVersion: strconv.Itoa(n), Objects: objs, Written: time.Now()})
	}
	for {
		for _, s := range snaps {
			if err := WriteFile(path, s); err != nil {
				os.Exit(3)
			}
		}
	}
}

// Decision 32: a process killed (SIGKILL) at random points while it writes
// snapshots never leaves one that loads wrong: the file always loads, whole,
// as one of the snapshots written.
func TestKillWhileWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "s.snap")
	for i := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), writerEnv+"="+path)
		require.NoError(t, cmd.Start())
		if i == 0 {
			require.Eventually(t, func() bool { _, err := os.Stat(path); return err == nil }, 30*time.Second, time.Millisecond)
		}
		// The kill point: a random moment into the writes.
		<-time.After(time.Duration(rand.IntN(40_000)) * time.Microsecond)
		require.NoError(t, cmd.Process.Kill())
		_ = cmd.Wait()

		s, err := ReadFile(path, testKey, Limits{})
		require.NoError(t, err, "kill %d", i)
		n, _ := strconv.Atoi(s.ResourceVersion)
		require.Len(t, s.Objects, n, "kill %d: the objects of version %s", i, s.ResourceVersion)
		RemoveTemporary(path)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
}
