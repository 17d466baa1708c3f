package kubeconfig

import (
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The bounds on silence (decision 36): their defaults, how each is turned
// off, and what reaches the transport.
func TestLivenessDefaults(t *testing.T) {
	custom := http.DefaultTransport
	for _, tc := range []struct {
		name             string
		cfg              Config
		after, timeout   time.Duration
		request          time.Duration
		keepAlive        net.KeepAliveConfig
		keepAliveDisable bool
	}{
		{name: "defaults", after: 10 * time.Second, timeout: 15 * time.Second, request: time.Minute,
			keepAlive: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}},
		{name: "set", cfg: Config{PingAfter: time.Second, PingTimeout: 2 * time.Second, Timeout: 3 * time.Second, KeepAlive: 30 * time.Second},
			after: time.Second, timeout: 2 * time.Second, request: 3 * time.Second,
			keepAlive: net.KeepAliveConfig{Enable: true, Idle: 30 * time.Second, Interval: 10 * time.Second, Count: 3}},
		{name: "short keepalive probes at least a second apart", cfg: Config{KeepAlive: time.Second},
			after: 10 * time.Second, timeout: 15 * time.Second, request: time.Minute,
			keepAlive: net.KeepAliveConfig{Enable: true, Idle: time.Second, Interval: time.Second, Count: 3}},
		{name: "off", cfg: Config{PingAfter: -1, PingTimeout: time.Second, Timeout: -1, KeepAlive: -1}, keepAliveDisable: true},
		{name: "custom transport keeps its own", cfg: Config{Transport: custom}, request: time.Minute,
			keepAlive: net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			after, timeout := tc.cfg.HealthCheck()
			require.Equal(t, tc.after, after, "ping after")
			require.Equal(t, tc.timeout, timeout, "ping timeout")
			require.Equal(t, tc.request, tc.cfg.RequestTimeout())
			d := tc.cfg.dialer()
			require.Equal(t, 30*time.Second, d.Timeout, "dial timeout")
			if tc.keepAliveDisable {
				require.False(t, d.KeepAliveConfig.Enable)
				require.Negative(t, d.KeepAlive)
				return
			}
			require.Equal(t, tc.keepAlive, d.KeepAliveConfig)
		})
	}
}

// The transport RoundTripper builds carries the health check.
func TestTransportPingsSilentConnections(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want *http.HTTP2Config
	}{
		{"default", Config{Host: "https://h"}, &http.HTTP2Config{SendPingTimeout: 10 * time.Second, PingTimeout: 15 * time.Second}},
		{"off", Config{Host: "https://h", PingAfter: -1}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, _, err := tc.cfg.httpTransport(nil)
			require.NoError(t, err)
			require.Equal(t, tc.want, tr.HTTP2)
			require.NotNil(t, tr.DialContext)
		})
	}
}

// decision 36: the transport RoundTripper builds bounds a TLS handshake
// by 10 s, so a server that accepts a connection and says nothing holds
// no request longer; and, though it dials with a dialer of its own
// (keepalive), still speaks HTTP/2, whose ping finds a silent connection.
func TestTransportBoundsHandshakeAndSpeaksHTTP2(t *testing.T) {
	cfg := Config{Host: "https://h"}
	tr, _, err := cfg.httpTransport(nil)
	require.NoError(t, err)
	require.Equal(t, 10*time.Second, tr.TLSHandshakeTimeout)

	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	cfg = Config{Host: srv.URL, CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})}
	rt, err := cfg.RoundTripper()
	require.NoError(t, err)
	c := &http.Client{Transport: rt}
	t.Cleanup(c.CloseIdleConnections)
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "HTTP/2.0", string(body), "the server saw")
	require.Equal(t, 2, resp.ProtoMajor)
}
