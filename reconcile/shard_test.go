package reconcile_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
)

// Two runners with shard members split the keys: each key is reconciled
// by its owner only, and every key by one of them. The members keep the
// real clock (short leases): their rounds are what is tested.
func TestShardedRunnersReconcileOwnKeys(t *testing.T) {
	f := newFixture(t)
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("cm-%02d", i))
		f.create(watchtest.ConfigMaps, "ns", names[i], "")
	}
	ids := []string{"m1", "m2"}
	var mu sync.Mutex
	by := map[string][]string{}
	for _, id := range ids {
		var inf *listwatch.Informer
		m, err := shard.New(shard.Config{
			Leases: f.client.Resource(watchtest.Leases).Namespace("ns"), Group: "g", Identity: id,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 100 * time.Millisecond,
			OnChange: func([]string) { inf.Relist() }, Logger: discard(),
		})
		require.NoError(t, err)
		inf = listwatch.NewInformer(m.Source(f.client.Resource(watchtest.ConfigMaps)), 0)
		r := reconcile.New(inf, func(_ context.Context, key string) (reconcile.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			by[key] = append(by[key], id)
			return reconcile.Result{}, nil
		})
		r.Member, r.Clock, r.Logger = m, clock.Real, discard()
		start(t, r)
	}
	// Until both see both, one may own every key; then each key is
	// reconciled by its owner, the loser having let go.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range names {
			who := by["ns/"+n]
			if len(who) == 0 || who[len(who)-1] != shard.Owner("ns/"+n, ids) {
				return false
			}
		}
		return true
	}, wait, 10*time.Millisecond, "every key reconciled by its owner")
	mu.Lock()
	defer mu.Unlock()
	owners := map[string]bool{}
	for _, who := range by {
		owners[who[len(who)-1]] = true
	}
	assert.Len(t, owners, 2, "both members reconcile keys")
}

// A membership that ends on its own — the server serves no leases — ends
// the runner too, with the member's reason: a runner whose member can
// never hand out a key must not idle until it is stopped.
func TestRunnerEndsWithItsMembership(t *testing.T) {
	s := watchtest.NewServer()
	s.Withhold(watchtest.Leases) // a server without leases
	t.Cleanup(s.Close)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	m, err := shard.New(shard.Config{
		Leases: c.Resource(watchtest.Leases).Namespace("ns"), Group: "g", Identity: "m1", Logger: discard(),
	})
	require.NoError(t, err)
	inf := listwatch.NewInformer(m.Source(c.Resource(watchtest.ConfigMaps)), 0)
	r := reconcile.New(inf, func(context.Context, string) (reconcile.Result, error) {
		t.Error("reconciled without a membership")
		return reconcile.Result{}, nil
	})
	r.Member, r.Logger = m, discard()
	err = start(t, r).wait(t)
	require.ErrorIs(t, err, shard.ErrNotServed)
	assert.ErrorContains(t, err, "shard membership ended")
}
