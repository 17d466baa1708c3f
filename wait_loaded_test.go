package listwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/apitest"
	"github.com/listwatch/listwatch/internal/fixtures"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/snapshot"
)

// decision 21, decision 32: WaitForLoaded returns nil once the cache is
// worth reading — a snapshot restored, with the server down, or the first
// sync — and, with no snapshot and a server that refuses, the reason at
// once, as WaitForSyncFailFast does, where a wait on Loaded would hang.
func TestWaitForLoaded(t *testing.T) {
	t.Run("snapshot, server down", func(t *testing.T) {
		r := newWarmRig(t, "a", "b")
		r.coldRun(t)
		r.s.Close()
		inf, _ := r.informer()
		run(t, inf)
		require.NoError(t, inf.WaitForLoaded(testwait.Context(t)))
		assert.True(t, inf.Restored())
		assert.Len(t, inf.Indexer().List(), 2)
	})
	t.Run("no snapshot, server up", func(t *testing.T) {
		r := newWarmRig(t, "a")
		inf, _ := r.informer()
		run(t, inf)
		require.NoError(t, inf.WaitForLoaded(testwait.Context(t)))
		assert.True(t, inf.HasSynced())
	})
	t.Run("no snapshot, 403", func(t *testing.T) {
		forbidden := apitest.Serve(t, fixtures.Load(t, "forbidden.json").ServeHTTP)
		inf, _ := loudInformer(t, forbidden.URL, "")
		inf.Snapshot = snapshot.Options{Dir: t.TempDir()}
		runInBackground(t, inf)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		err := inf.WaitForLoaded(ctx)
		require.Error(t, err)
		assert.NoError(t, ctx.Err(), "returned for the 403, not the deadline")
		assert.True(t, httpwatch.IsForbidden(err), "%v", err)
		select {
		case <-inf.Loaded():
			t.Fatal("loaded with nothing to read")
		default:
		}
	})
}
