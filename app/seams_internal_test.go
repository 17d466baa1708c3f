package app

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reconcile"
)

// In a pod the lease namespace defaults to the one its service account's
// file names, trimmed; an empty or missing file means "default".
// Decision 39.
func TestLeaseNamespaceIsThePods(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		write         bool
		want          string
	}{
		{"in a pod", "team-a\n", true, "team-a"},
		{"empty file", " \n", true, "default"},
		{"no file", "", false, "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, tc.name)
			if tc.write {
				require.NoError(t, os.WriteFile(file, []byte(tc.content), 0o600))
			}
			assert.Equal(t, tc.want, podNamespace(file))
		})
	}
}

// The probe server bounds how long a client may take over its request's
// headers, so that a client that never finishes them holds no connection
// open for ever (net/http's zero is no bound at all). Decision 39.
func TestProbeServerBoundsHeaderTime(t *testing.T) {
	srv := (&App{}).probeServer(nil)
	assert.Equal(t, 10*time.Second, srv.ReadHeaderTimeout)
}

// Only runners take part in leader election or shards, so only then does
// Run wait for a lease record: a program of Go functions alone under
// --leader-elect has none to wait for and must not end after SyncTimeout
// for want of one. Decision 39.
func TestOnlyRunnersWaitForALease(t *testing.T) {
	runner := []*reconcile.Runner{{}}
	for _, tc := range []struct {
		name string
		a    *App
		want bool
	}{
		{"leader election, a runner", &App{LeaderElection: true, runners: runner}, true},
		{"shards, a runner", &App{Shards: true, runners: runner}, true},
		{"leader election, Go functions only", &App{LeaderElection: true}, false},
		{"shards, Go functions only", &App{Shards: true}, false},
		{"a runner, no election", &App{runners: runner}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.a.waitsForLease())
		})
	}
}
