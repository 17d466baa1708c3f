package e2e

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// leaderMonitor records terms of OnStartedLeading and checks, as each one
// starts, that every earlier one's context is done.
type leaderMonitor struct {
	mu      sync.Mutex
	ctxs    []context.Context
	started []string
	at      []time.Time
	overlap []string
}

func (m *leaderMonitor) lead(id string) func(context.Context) {
	return func(ctx context.Context) {
		m.mu.Lock()
		for i, c := range m.ctxs {
			if c.Err() == nil {
				m.overlap = append(m.overlap, id+" started while "+m.started[i]+" leads")
			}
		}
		m.ctxs, m.started, m.at = append(m.ctxs, ctx), append(m.started, id), append(m.at, time.Now())
		m.mu.Unlock()
		<-ctx.Done()
	}
}

// term waits for the n-th leader (from 1) and returns it with its start.
func (m *leaderMonitor) term(t *testing.T, n int) (string, time.Time) {
	t.Helper()
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.started) >= n
	}, wait, 10*time.Millisecond)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Empty(t, m.overlap)
	return m.started[n-1], m.at[n-1]
}

// Three in-process candidates on the real server with short durations:
// one leads; cancelled with ReleaseOnCancel, another takes over at its next
// attempt; that one stops renewing without releasing (a crash), and the
// last takes over within LeaseDuration + (1+JitterFactor)*RetryPeriod.
// Never two at once.
func TestLeaderElectionHandover(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	leases := c.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: ns})
	const lease, renew, retry = 3 * time.Second, 2 * time.Second, 500 * time.Millisecond
	m := &leaderMonitor{}
	type candidate struct {
		stop context.CancelFunc
		done chan struct{}
		err  error
	}
	cands := map[string]*candidate{}
	start := func(id string, release bool) {
		el, err := leader.New(leader.Config{
			Leases: leases, Name: "e2e", Identity: id,
			LeaseDuration: lease, RenewDeadline: renew, RetryPeriod: retry,
			ReleaseOnCancel: release, OnStartedLeading: m.lead(id),
		})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cd := &candidate{stop: cancel, done: make(chan struct{})}
		cands[id] = cd
		go func() { defer close(cd.done); cd.err = el.Run(ctx) }()
		t.Cleanup(func() { cancel(); testwait.RecvWithin(t, cd.done, wait, "Run to return after cancel") })
	}

	start("a", true)
	first, _ := m.term(t, 1)
	require.Equal(t, "a", first)
	start("b", false)
	start("c", false)

	released := time.Now()
	cands["a"].stop()
	testwait.RecvWithin(t, cands["a"].done, wait, "a's Run to return after cancel")
	require.NoError(t, cands["a"].err)
	second, at := m.term(t, 2)
	t.Logf("release handover to %s: %v", second, at.Sub(released))
	require.Less(t, at.Sub(released), lease, "a released lease is taken at the next attempt, not after LeaseDuration")

	killed := time.Now()
	cands[second].stop() // no release: the lease stays held until it expires
	testwait.RecvWithin(t, cands[second].done, wait, "the second leader's Run to return after cancel")
	require.NoError(t, cands[second].err)
	third, at := m.term(t, 3)
	t.Logf("crash handover to %s: %v", third, at.Sub(killed))
	require.NotEqual(t, second, third)
	require.Less(t, at.Sub(killed), lease+time.Duration((1+leader.DefaultJitterFactor)*float64(retry))+time.Second)

	raw, err := leases.Get(context.Background(), "e2e")
	require.NoError(t, err)
	require.Equal(t, third, raw.Get("spec.holderIdentity").String())
	require.EqualValues(t, 2, raw.Get("spec.leaseTransitions").Int())
}
