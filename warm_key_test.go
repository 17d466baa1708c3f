package listwatch

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// decision 32: the snapshots of a source that is not a ResourceClient are
// kept only with an Identity naming what its objects are; without one the
// informer says why at Info and writes none.
func TestSnapshotOfOtherSourceNeedsIdentity(t *testing.T) {
	for _, identity := range []string{"", "memSource"} {
		t.Run("identity="+identity, func(t *testing.T) {
			src := newMemSource()
			src.put("ns", "a", "x")
			inf := NewInformer(src, 0)
			inf.Reflector.Backoff = reflector.Backoff{Initial: -1}
			dir := t.TempDir()
			inf.Snapshot = snapshot.Options{Dir: dir, Identity: identity}
			log := &testlog.Log{}
			inf.Logger = slog.New(log)
			stop := run(t, inf)
			require.NoError(t, inf.Wait(testwait.Context(t)))
			stop() // a snapshot is saved at stop, if kept
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			above := log.Above()
			if identity != "" {
				assert.Len(t, entries, 1, "a snapshot is kept")
				assert.Empty(t, above)
				return
			}
			assert.Empty(t, entries, "no snapshot without an Identity")
			require.Len(t, above, 1, "%q", above)
			assert.True(t, strings.HasPrefix(above[0], "INFO informer: no snapshots kept"), above[0])
			assert.Contains(t, above[0], "set Snapshot.Identity")
		})
	}
}

// decision 32: a snapshot exactly MaxAge old is still used; only an older
// one is refused (TestWarmStartTooOldIsIgnored).
func TestWarmStartAtMaxAgeIsUsed(t *testing.T) {
	r := newWarmRig(t, "a")
	r.coldRun(t)
	r.clock.Step(snapshot.DefaultMaxAge)
	inf, log := r.informer()
	run(t, inf)
	testwait.Recv(t, inf.warm.loaded, "the snapshot to be loaded")
	assert.True(t, inf.restored(), "restored, awaiting the server's confirmation")
	assert.Equal(t, []string{"INFO informer: restored snapshot; awaiting the server's confirmation"}, said(log))
}
