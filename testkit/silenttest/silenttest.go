// Package silenttest is the rig of the tests of what a silent connection
// does to listwatch's parts (decision 36): a watchtest API server over TLS
// and HTTP/2 behind a stallproxy, and a client for it whose HTTP/2 ping is
// short, so a stalled connection is given up in under half a second.
//
//	rig := silenttest.New(t, watchtest.Leases)
//	... // start a part on rig.Client
//	rig.Proxy.Stall()
package silenttest

import (
	"encoding/pem"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/stallproxy"
	"github.com/listwatch/listwatch/watchtest"
)

// The client's HTTP/2 health check.
const (
	PingAfter   = 100 * time.Millisecond
	PingTimeout = 300 * time.Millisecond
)

// Rig is a server, the proxy in front of it and a client through the proxy.
type Rig struct {
	Server *watchtest.Server
	Proxy  *stallproxy.Proxy
	Client *httpwatch.Client
}

// New starts a rig serving resources besides watchtest's defaults; t's
// Cleanup stops it.
func New(t testing.TB, resources ...httpwatch.Resource) *Rig {
	t.Helper()
	srv := watchtest.NewUnstartedServer()
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close) // after the proxy's Cleanup has cut the stalled connections
	for _, r := range resources {
		srv.AddResource(r, watchtest.Definition{})
	}
	p := stallproxy.New(t, srv.Listener.Addr().String())
	c, err := httpwatch.NewClient(&kubeconfig.Config{
		Host: "https://" + p.Addr(), QPS: -1,
		CAData:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}),
		PingAfter: PingAfter, PingTimeout: PingTimeout,
	})
	if err != nil {
		t.Fatalf("silenttest: %v", err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return &Rig{Server: srv, Proxy: p, Client: c}
}

// Leases is the client's resource for leases in namespace default.
func (r *Rig) Leases() *httpwatch.ResourceClient {
	return r.Client.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "default"})
}

// RenewedAt is when the lease named name was last renewed, as the server
// holds it.
func (r *Rig) RenewedAt(t testing.TB, name string) time.Time {
	t.Helper()
	l, err := r.Server.Get(watchtest.Leases, "default", name)
	if err != nil {
		t.Fatalf("silenttest: lease %s: %v", name, err)
	}
	at, err := time.Parse(time.RFC3339Nano, l.Get("spec.renewTime").String())
	if err != nil {
		t.Fatalf("silenttest: lease %s renewTime: %v", name, err)
	}
	return at
}
