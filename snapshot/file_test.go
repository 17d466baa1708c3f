package snapshot

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Decision 32: a crash at any step of a write leaves the old snapshot or
// the new one, whole, and what it left behind is cleaned up.
func TestWriteIsAtomic(t *testing.T) {
	crash := errors.New("crash")
	for _, tc := range []struct {
		at      stage
		wantNew bool
	}{
		{stageWritten, false},
		{stageSynced, false},
		{stageRenamed, true},
	} {
		t.Run(string(tc.at), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "pods.v1.snap")
			old := &Snapshot{Key: testKey, ResourceVersion: "10", Objects: objects(t, 3), Written: time.Now()}
			require.NoError(t, WriteFile(path, old))
			next := &Snapshot{Key: testKey, ResourceVersion: "20", Objects: objects(t, 7), Written: time.Now()}
			err := writeFile(path, next, func(st stage) error {
				if st == tc.at {
					return crash
				}
				return nil
			})
			require.ErrorIs(t, err, crash)

			got, err := ReadFile(path, testKey, Limits{})
			require.NoError(t, err)
			if tc.wantNew {
				require.Equal(t, "20", got.ResourceVersion)
				require.Len(t, got.Objects, 7)
			} else {
				require.Equal(t, "10", got.ResourceVersion)
				require.Len(t, got.Objects, 3)
			}
			RemoveTemporary(path)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "only the snapshot is left")
		})
	}
}

// Decision 32: a temporary file cut at any length, renamed into place as a
// broken filesystem might, never loads.
func TestCutFileNeverLoads(t *testing.T) {
	b := encoded(t, 4)
	path := filepath.Join(t.TempDir(), "s.snap")
	for _, n := range []int{0, 1, 7, 8, 12, len(b) / 2, len(b) - 5, len(b) - 1} {
		require.NoError(t, os.WriteFile(path, b[:n], 0o600))
		s, err := ReadFile(path, testKey, Limits{})
		require.ErrorIs(t, err, ErrCorrupt, "cut at %d", n)
		require.Nil(t, s)
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
	_, err := ReadFile(path, testKey, Limits{})
	require.NoError(t, err)
}

func TestReadMissingFile(t *testing.T) {
	_, err := ReadFile(filepath.Join(t.TempDir(), "none.snap"), testKey, Limits{})
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestWriteFailsWithoutDirectory(t *testing.T) {
	err := WriteFile(filepath.Join(t.TempDir(), "missing", "s.snap"), &Snapshot{Key: testKey})
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestPath(t *testing.T) {
	o := Options{Dir: "/var/lib/agent"}
	require.Equal(t, "/var/lib/agent/pods.v1_default.snap", o.Path(Key{Resource: "pods.v1", Namespace: "default"}))
	require.Equal(t, "/var/lib/agent/deployments.v1.apps.snap", o.Path(Key{Resource: "deployments.v1.apps"}))
	require.Equal(t, "/var/lib/agent/x_y.snap", o.Path(Key{Resource: "x/y"}))
	o.Name = "mine.snap"
	require.Equal(t, "/var/lib/agent/mine.snap", o.Path(Key{Resource: "pods.v1"}))
}

// Decision 32: a snapshot may hold Secrets: only its owner may read it.
func TestFileIsPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.snap")
	require.NoError(t, WriteFile(path, &Snapshot{Key: testKey}))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
}
