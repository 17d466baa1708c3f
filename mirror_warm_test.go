package listwatch

import (
	"context"
	"errors"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMirrorHearsTheRestoredSnapshot is decision 45: a warm start hands
// its restored snapshot to the Mirror as a list at the snapshot's
// version, before anything the reflector hands it, so that a cache served
// onwards serves it at once.
func TestMirrorHearsTheRestoredSnapshot(t *testing.T) {
	up := watchtest.NewServer()
	defer up.Close()
	for _, p := range []string{`{"metadata":{"name":"a","namespace":"ns"}}`, `{"metadata":{"name":"b","namespace":"ns"}}`} {
		_, err := up.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: up.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	dir := t.TempDir()
	start := func(m *mirrorLog) func() {
		inf := NewInformer(client.Resource(watchtest.Pods), 0)
		inf.Snapshot = snapshot.Options{Dir: dir}
		if m != nil {
			inf.Mirror = m
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); inf.Run(ctx) }()
		wctx, wcancel := context.WithTimeout(ctx, wait)
		defer wcancel()
		require.NoError(t, inf.Wait(wctx))
		return func() { cancel(); <-done }
	}
	start(nil)() // saves the snapshot
	rv := up.ResourceVersion()
	_, err = up.Create(watchtest.Pods, `{"metadata":{"name":"c","namespace":"ns"}}`)
	require.NoError(t, err)
	m := &mirrorLog{more: make(chan struct{}, 1)}
	stop := start(m)
	defer stop()
	got := m.waitFor(t, 2)
	require.Equal(t, []string{"replace 2 " + rv, "add ns/c " + up.ResourceVersion()}, got[:2])
}

// refusing is a Mirror that refuses every list.
type refusing struct{ mirrorLog }

func (*refusing) Replace([]*Object, string) error { return errors.New("full") }

// decision 45: a Mirror that refuses the restored snapshot is said at
// Error and handed to OnError; one that takes it says nothing.
func TestMirrorRefusingTheRestoredSnapshotIsSaid(t *testing.T) {
	r := newWarmRig(t)
	snap := &snapshot.Snapshot{ResourceVersion: "7"}
	for _, refuse := range []bool{false, true} {
		inf, log := r.informer()
		var heard []error
		inf.onError = func(err error) { heard = append(heard, err) }
		if refuse {
			inf.Mirror = &refusing{}
		} else {
			inf.Mirror = &mirrorLog{more: make(chan struct{}, 1)}
		}
		inf.mirrorRestored(snap)
		if !refuse {
			assert.Empty(t, log.Above())
			assert.Empty(t, heard)
			continue
		}
		require.Len(t, log.Above(), 1)
		assert.Contains(t, log.Above()[0], "ERROR informer: the Mirror refused the restored snapshot")
		assert.Contains(t, log.Above()[0], "err=full")
		require.Len(t, heard, 1)
		assert.EqualError(t, heard[0], "full")
	}
}
