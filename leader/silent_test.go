package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/testkit/silenttest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// decision 36: a leader whose HTTP/2 connection goes silent (the proxy in
// between stops forwarding, sockets open) keeps or retakes its lease on a
// new connection within LeaseDuration of the silence: its renewals are not
// held by the dead connection.
func TestLeaderRecoversFromSilentConnection(t *testing.T) {
	rig := silenttest.New(t, watchtest.Leases)

	const leaseDuration = 3 * time.Second
	leading := make(chan struct{}, 8)
	el, err := leader.New(leader.Config{
		Leases: rig.Leases(),
		Name:   "silent", Identity: "a",
		LeaseDuration: leaseDuration, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
		OnStartedLeading: func(ctx context.Context) { leading <- struct{}{}; <-ctx.Done() },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- el.Run(ctx) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return") })
	testwait.Recv(t, leading, "the first term")

	rig.Proxy.Stall()
	stalled := time.Now()
	require.Eventually(t, func() bool { return rig.RenewedAt(t, "silent").After(stalled) && el.Leader() == "a" },
		leaseDuration+5*time.Second, 10*time.Millisecond, "the lease is renewed on a new connection")
	require.Greater(t, rig.Proxy.Accepted(), 1)
}
