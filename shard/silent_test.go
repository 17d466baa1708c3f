package shard_test

import (
	"context"
	"testing"
	"time"

	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/testkit/silenttest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// decision 36: a shard member whose HTTP/2 connection goes silent (the
// proxy in between stops forwarding, sockets open) renews its lease on a
// new connection within LeaseDuration of the silence, so the group does
// not lose it.
func TestMemberRecoversFromSilentConnection(t *testing.T) {
	rig := silenttest.New(t, watchtest.Leases)

	const leaseDuration = 3 * time.Second
	joined := make(chan []string, 8)
	m, err := shard.New(shard.Config{
		Leases: rig.Leases(),
		Group:  "silent", Identity: "a",
		LeaseDuration: leaseDuration, RenewDeadline: 2 * time.Second, RetryPeriod: 200 * time.Millisecond,
		OnChange: func(members []string) { joined <- members },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return") })
	testwait.Recv(t, joined, "the member to join")

	rig.Proxy.Stall()
	stalled := time.Now()
	require.Eventually(t, func() bool { return rig.RenewedAt(t, "silent-a").After(stalled) }, leaseDuration+5*time.Second, 10*time.Millisecond,
		"the lease is renewed on a new connection")
	require.Greater(t, rig.Proxy.Accepted(), 1)
}
