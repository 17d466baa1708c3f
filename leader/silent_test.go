package leader_test

import (
	"context"
	"encoding/pem"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/stallproxy"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// decision 36: a leader whose HTTP/2 connection goes silent (the proxy in
// between stops forwarding, sockets open) keeps or retakes its lease on a
// new connection within LeaseDuration of the silence: its renewals are not
// held by the dead connection.
func TestLeaderRecoversFromSilentConnection(t *testing.T) {
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
	leading := make(chan struct{}, 8)
	el, err := leader.New(leader.Config{
		Leases: client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "default"}),
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

	renewed := func() time.Time {
		l, err := srv.Get(watchtest.Leases, "default", "silent")
		require.NoError(t, err)
		at, err := time.Parse(time.RFC3339Nano, l.Get("spec.renewTime").String())
		require.NoError(t, err)
		return at
	}
	p.Stall()
	stalled := time.Now()
	require.Eventually(t, func() bool { return renewed().After(stalled) && el.Leader() == "a" },
		leaseDuration+5*time.Second, 10*time.Millisecond, "the lease is renewed on a new connection")
	require.Greater(t, p.Accepted(), 1)
}
