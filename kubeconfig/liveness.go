package kubeconfig

import (
	"cmp"
	"net"
	"time"
)

// How long a connection may stay silent before it is given up (decision
// 36). Real clusters are reached over HTTP/2, where one connection carries
// every request of a process: a connection that stops answering without
// closing (a black-holed path, a NAT or load balancer that forgot the flow,
// a suspended VM, a wedged server) would otherwise hold every watch, list,
// write and lease renewal until their contexts end, or forever.
const (
	// DefaultPingAfter is how long an HTTP/2 connection may go without a
	// frame before it is pinged. A quiet watch hears a bookmark about once
	// a minute, so an idle cluster costs one small ping frame every ten
	// seconds per connection.
	DefaultPingAfter = 10 * time.Second
	// DefaultPingTimeout is how long a ping may go unanswered before the
	// connection is closed. With DefaultPingAfter, a silent connection is
	// closed at most 25 s after its last frame (client-go: 45 s).
	DefaultPingTimeout = 15 * time.Second
	// DefaultKeepAlive starts TCP keepalive probes after 15 s without
	// traffic, so a peer that vanished is found within 30 s on HTTP/1.1
	// too. Probes cannot see a peer whose socket is alive but silent (a
	// proxy that stopped forwarding, a wedged server): the HTTP/2 ping and
	// the reflector's watch idle limit find those.
	DefaultKeepAlive = 15 * time.Second
	// DefaultTimeout bounds one attempt of a non-watch request. The API
	// server ends its own non-watch requests after a minute
	// (--request-timeout), so an answer that has not come by then will not
	// come.
	DefaultTimeout = time.Minute
)

// dialTimeout bounds establishing one TCP connection, and
// tlsHandshakeTimeout its TLS handshake, as net/http's default transport
// does: a server that accepts and then says nothing holds no request
// longer.
const (
	dialTimeout         = 30 * time.Second
	tlsHandshakeTimeout = 10 * time.Second
)

// HealthCheck returns the HTTP/2 health check c asks for, defaults
// applied: ping after this long without a frame, close the connection
// when the ping is not answered within timeout. Both are zero when the
// check is off: PingAfter is negative, or Transport is set (its own
// settings apply).
func (c *Config) HealthCheck() (after, timeout time.Duration) {
	if c.PingAfter < 0 || c.Transport != nil {
		return 0, 0
	}
	after, timeout = c.PingAfter, c.PingTimeout
	if after == 0 {
		after = DefaultPingAfter
	}
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	return after, timeout
}

// RequestTimeout returns the bound of one attempt of a non-watch request,
// the default applied; zero means none.
func (c *Config) RequestTimeout() time.Duration {
	switch {
	case c.Timeout < 0:
		return 0
	case c.Timeout == 0:
		return DefaultTimeout
	}
	return c.Timeout
}

// dialer makes the connections of the transport RoundTripper builds.
func (c *Config) dialer() *net.Dialer {
	d := &net.Dialer{Timeout: dialTimeout}
	if c.KeepAlive < 0 {
		d.KeepAlive = -1 // off
		return d
	}
	ka := cmp.Or(c.KeepAlive, DefaultKeepAlive)
	d.KeepAliveConfig = net.KeepAliveConfig{Enable: true, Idle: ka, Interval: max(ka/3, time.Second), Count: 3}
	return d
}
