// Package stallproxy is a TCP proxy for tests that can go silent: after
// Stall, the connections it holds stop forwarding in both directions but
// stay open, as through a black-holed network path, a NAT or load balancer
// that forgot the flow, or a wedged server. Connections made after Stall
// pass, so a client that gives up the silent ones recovers.
//
//	p := stallproxy.New(t, srv.Listener.Addr().String())
//	cfg.Host = "https://" + p.Addr()
//	... // start a watch through p
//	p.Stall()
//
// Unlike a proxy that closes or resets, nothing tells the client: the
// kernel keeps acknowledging on both sockets, so TCP keepalive cannot find
// it either. Only a bound on silence does.
package stallproxy

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections to a target. Close it (New registers a
// Cleanup that does).
type Proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	held    []*link // forwarding; stalled by Stall
	stalled []*link // silent until Close
	accepts int
	closed  bool
	wg      sync.WaitGroup
}

// link is one proxied connection: the client's side and the target's.
type link struct {
	client, server net.Conn
	stall          chan struct{} // closed by Stall: stop forwarding
}

// New starts a proxy to target (host:port) on a loopback port; t's Cleanup
// closes it and every connection it holds.
func New(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("stallproxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Accepted is how many connections the proxy has accepted so far.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepts
}

// Stall makes every connection the proxy holds now silent in both
// directions, for good: their bytes are no longer forwarded, and their
// sockets stay open until Close. Later connections are forwarded.
func (p *Proxy) Stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range p.held {
		close(l.stall)
	}
	p.stalled = append(p.stalled, p.held...)
	p.held = nil
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.ln.Close()
	for _, l := range append(p.held, p.stalled...) {
		l.client.Close()
		l.server.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		l := &link{client: c, server: s, stall: make(chan struct{})}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.accepts++
		p.held = append(p.held, l)
		p.wg.Add(2)
		p.mu.Unlock()
		go p.forward(l, s, c)
		go p.forward(l, c, s)
	}
}

// forward copies from src to dst until the link stalls or either side
// closes. A stalled link keeps reading (so the sender's kernel sees its
// bytes taken) and drops what it reads.
func (p *Proxy) forward(l *link, dst, src net.Conn) {
	defer p.wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-l.stall:
			default:
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			if err != io.EOF {
				return
			}
			select {
			case <-l.stall:
				return // silent: the other side never learns of the close
			default:
			}
			if tc, ok := dst.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
			return
		}
	}
}
