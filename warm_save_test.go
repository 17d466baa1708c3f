package listwatch

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// decision 32: the first snapshot is saved right after the first sync,
// not an Interval later, so a process killed in its first minute still
// restarts warm; the clock never moves here.
func TestSnapshotIsSavedAfterTheFirstSync(t *testing.T) {
	r := newWarmRig(t, "a", "b")
	inf, log := r.informer()
	stop := run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	rv := inf.LastSyncResourceVersion()
	require.Eventually(t, func() bool {
		snap, err := snapshot.ReadFile(r.path(), r.key(), snapshot.Limits{})
		return err == nil && snap.ResourceVersion == rv && len(snap.Objects) == 2
	}, wait, time.Millisecond, "a snapshot before the first Interval")
	stop()
	assert.Empty(t, log.Above())
}

// decision 32: a snapshot directory that exists but cannot be written is
// said at start, once (at Error with what to do, decision 38: retrying
// cannot cure it), before any save; the saves that then fail
// add nothing above Debug, and the informer works without snapshots.
func TestSnapshotDirNotWritableIsSaidAtStart(t *testing.T) {
	dir := unwritableDir(t)
	r := newWarmRig(t, "a")
	r.dir = dir
	inf, log := r.informer()
	run(t, inf)
	require.Eventually(t, func() bool { return len(log.Lines(slog.LevelWarn)) > 0 }, wait, time.Millisecond)
	lines := log.Above()
	// Error with a hint for a directory this process may not write, Warn
	// for root's stand-in, whose failure is another.
	assert.Regexp(t, `^(ERROR|WARN) informer: snapshot directory not writable; snapshots will not be saved, a restart will list`, lines[0])
	if os.Geteuid() != 0 {
		assert.Contains(t, lines[0], "ERROR informer")
		assert.Contains(t, lines[0], "hint=check the permissions of "+dir)
	}
	assert.Contains(t, lines[0], "path="+dir)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return strings.Contains(log.All(), "DEBUG informer: snapshot not saved") }, wait, time.Millisecond,
		"the failed save, right after the first sync")
	r.clock.Step(snapshot.DefaultInterval)
	assert.Len(t, log.Above(), 1, "%q", log.Above())
}

// unwritableDir is a directory the test process cannot make a file in: a
// read-only one, or for root, whom modes do not stop, /proc/self/fdinfo.
func unwritableDir(t *testing.T) string {
	t.Helper()
	if os.Geteuid() == 0 {
		if runtime.GOOS != "linux" {
			t.Skip("no directory root cannot write to")
		}
		return "/proc/self/fdinfo"
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	return dir
}

// decision 38: a snapshot that cannot be written is said by its cause: at
// Error with what to do when retrying cannot cure it (a directory this
// process may not write; as root, the test of a read-only directory
// cannot show it), at Warn otherwise, with a hint only where the cause
// has one.
func TestSaveFailureIsSaidByItsCause(t *testing.T) {
	r := newWarmRig(t)
	for _, c := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "open", Path: "/snaps/x", Err: fs.ErrPermission}, "ERROR informer: snapshot not saved; a restart will list"},
		{&fs.PathError{Op: "write", Path: "/snaps/x", Err: syscall.ENOSPC}, "WARN informer: snapshot not saved; a restart will list"},
		{errors.New("odd"), "WARN informer: snapshot not saved; a restart will list"},
	} {
		inf, log := r.informer()
		inf.saveFailed("informer: snapshot not saved; a restart will list", "/snaps/x", c.err)
		lines := log.Above()
		require.Len(t, lines, 1, "%v", c.err)
		assert.Contains(t, lines[0], c.want, "%v", c.err)
		switch {
		case errors.Is(c.err, fs.ErrPermission):
			assert.Contains(t, lines[0], "hint=check the permissions of /snaps/x: this process may not write there")
		case errors.Is(c.err, syscall.ENOSPC):
			assert.Contains(t, lines[0], "hint=free space on the device of /snaps/x")
		default:
			assert.NotContains(t, lines[0], "hint=")
		}
	}
}
