package shard_test

import (
	"context"
	"encoding/pem"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/stallproxy"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// decision 36: a shard member whose HTTP/2 connection goes silent (the
// proxy in between stops forwarding, sockets open) renews its lease on a
// new connection within LeaseDuration of the silence, so the group does
// not lose it.
func TestMemberRecoversFromSilentConnection(t *testing.T) {
	srv := watchtest.NewUnstartedServer()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	p := stallproxy.New(t, srv.Listener.Addr().String())
	client, err := httpwatch.NewClient(&kubeconfig.Config{
		Host: "https://" + p.Addr(), QPS: -1,
		CAData:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		PingAfter: 100 * time.Millisecond, PingTimeout: 300 * time.Millisecond,
	})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)

	const leaseDuration = 3 * time.Second
	joined := make(chan []string, 8)
	m, err := shard.New(shard.Config{
		Leases: client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "default"}),
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

	renewed := func() time.Time {
		l, err := srv.Get(watchtest.Leases, "default", "silent-a")
		require.NoError(t, err)
		at, err := time.Parse(time.RFC3339Nano, l.Get("spec.renewTime").String())
		require.NoError(t, err)
		return at
	}
	p.Stall()
	stalled := time.Now()
	require.Eventually(t, func() bool { return renewed().After(stalled) }, leaseDuration+5*time.Second, 10*time.Millisecond,
		"the lease is renewed on a new connection")
	require.Greater(t, p.Accepted(), 1)
}
