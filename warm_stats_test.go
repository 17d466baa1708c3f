package listwatch

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// decision 32: Stats says when the last snapshot was saved, how big its
// file is and how long the write took, for metrics of a warm start.
func TestStatsSayWhenTheSnapshotWasSaved(t *testing.T) {
	r := newWarmRig(t, "a", "b")
	inf, _ := r.informer()
	assert.Zero(t, inf.Stats().Snapshot, "nothing saved before Run")
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return !inf.Stats().Snapshot.Saved.IsZero() }, wait, time.Millisecond)
	st := inf.Stats().Snapshot
	fi, err := os.Stat(r.path())
	require.NoError(t, err)
	assert.Equal(t, fi.Size(), st.Bytes)
	assert.Equal(t, r.clock.Now(), st.Saved, "on the informer's clock")
	assert.Zero(t, st.Took, "the fake clock did not move while writing")
	assert.Zero(t, st.Failures)
}

// A save that fails is counted, and leaves the last save's figures alone.
func TestStatsCountSnapshotsNotSaved(t *testing.T) {
	dir := unwritableDir(t)
	r := newWarmRig(t, "a")
	r.dir = dir
	inf, _ := r.informer()
	run(t, inf)
	require.NoError(t, inf.Wait(testwait.Context(t)))
	require.Eventually(t, func() bool { return inf.Stats().Snapshot.Failures == 1 }, wait, time.Millisecond)
	st := inf.Stats().Snapshot
	assert.True(t, st.Saved.IsZero())
	assert.Zero(t, st.Bytes)
}

// Informers lists what the factory made, as a copy.
func TestFactoryInformers(t *testing.T) {
	r := newWarmRig(t)
	f := NewFactory(r.client)
	assert.Empty(t, f.Informers())
	pods := f.ForResource(podsRes)
	cms := f.ForResource(httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "ns"})
	got := f.Informers()
	assert.Equal(t, map[Identity]*Informer{{Resource: podsRes}: pods, {Resource: httpwatch.Resource{Version: "v1", Resource: "configmaps", Namespace: "ns"}}: cms}, got)
	delete(got, Identity{Resource: podsRes})
	assert.Len(t, f.Informers(), 2, "the factory's own map is not handed out")
}
