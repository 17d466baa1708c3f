package listwatch

import (
	"os"
	"testing"

	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision 32: a resumed watch whose first event is the server's 410 does
// not confirm the snapshot. Wait returns only once the relist is in
// the cache, so a pod deleted while the process was down is gone from the
// cache the moment Wait returns, not some time later.
func TestWarmStartExpiredWatchDoesNotConfirm(t *testing.T) {
	r := newWarmRig(t, "keep", "remove")
	r.coldRun(t)
	_, err := r.s.Delete(watchtest.Pods, "ns", "remove")
	require.NoError(t, err)
	require.NoError(t, r.s.Compact(r.s.ResourceVersion()))

	inf, log := r.informer()
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	// No Eventually: the cache must be right as the wait returns.
	assert.Equal(t, map[string]string{"ns/keep": r.names["keep"]}, cacheView(inf),
		"the pod deleted during the downtime is still cached: the 410 was taken as confirmation")
	assert.False(t, inf.restored())
	assert.Equal(t, []string{"INFO informer: restored snapshot; awaiting the server's confirmation", "INFO informer: restored snapshot out of date; listed instead"}, said(log))
}

// decision 32: a snapshot that cannot be used is removed as well as logged,
// before the informer syncs, so that no later start trips on it again.
// (The next snapshot is written only at the next Interval or at stop.)
func TestWarmStartUnusableSnapshotIsRemoved(t *testing.T) {
	for name, spoil := range map[string]func([]byte) []byte{
		"body":    func(b []byte) []byte { b[len(b)-2] ^= 1; return b }, // found as the objects are read
		"header":  func([]byte) []byte { return []byte("not a snapshot") },
		"version": func(b []byte) []byte { b[7]++; return b },
	} {
		t.Run(name, func(t *testing.T) {
			r := newWarmRig(t, "a")
			r.coldRun(t)
			b, err := os.ReadFile(r.path())
			require.NoError(t, err)
			spoilt := spoil(b)
			require.NoError(t, os.WriteFile(r.path(), spoilt, 0o600))

			inf, log := r.informer()
			run(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			require.Len(t, log.Above(), 1, "%q", log.Above())
			// Removed; the informer saves its own right after its first
			// sync (decision 32), which may already be there.
			if now, err := os.ReadFile(r.path()); err == nil {
				assert.NotEqual(t, spoilt, now, "logged but not removed")
			}
			assert.Equal(t, serverView(t, r.s), cacheView(inf))
		})
	}
}
