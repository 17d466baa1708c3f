package httpwatch

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/internal/faillog"
)

// ErrConnectionLost is wrapped by the error of every request, and every
// read of a response body, that failed because the transport gave its
// connection up as silent: an HTTP/2 ping went unanswered (see
// kubeconfig.Config.PingAfter). IsProbableEOF reports it, so a watch on
// the connection resumes from its resourceVersion and a get or list is
// retried on a new connection.
var ErrConnectionLost = errors.New("connection lost")

// pingLost is net/http's message for a connection its HTTP/2 health check
// closed. net/http exports no error value to match, and every request on
// the connection fails with the one error it made, so that value also
// names the connection.
const pingLost = "http2: client connection lost"

// lostConns remembers the last few lost connections reported, so each is
// said once however many requests it failed, and says them by the
// failure policy (decision 20): the first loss at Warn, more within five
// minutes counted, the first answer after them at Info. A flapping link
// is one line, not one per connection.
type lostConns struct {
	mu       sync.Mutex
	reported [8]error
	next     int

	tracker faillog.Tracker
	setup   sync.Once   // gives tracker the client's logger and clock
	pending atomic.Bool // a loss was reported that no answer has followed
}

// report says one lost connection; l.mu is held.
func (l *lostConns) report(c *Client, within string) {
	if c.Logger == nil {
		return
	}
	l.setup.Do(func() { l.tracker.Logger, l.tracker.Clock = c.Logger, c.clock })
	l.tracker.Failed(faillog.Failure{
		Key: "connection lost", Level: slog.LevelWarn,
		Msg:   "httpwatch: no answer to an HTTP/2 ping " + within + ": connection to " + c.host.Host + " closed",
		Again: "httpwatch: HTTP/2 connection lost",
		Attrs: []any{"host", c.host.Host, "next", "watches on it resume from their resourceVersion; requests are retried on a new connection"},
		Err:   ErrConnectionLost,
	})
	l.pending.Store(true)
}

// again counts one more request that failed after a loss no answer has
// followed yet, one that could not get through on a new connection
// either. The recovery line says them all ("answers again after 5
// failures"); each is a line at Debug.
func (l *lostConns) again(c *Client, err error) {
	if !l.pending.Load() {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending.Load() {
		l.count(c, err)
	}
}

// count counts err, a request that failed after a loss; l.mu is held.
func (l *lostConns) count(c *Client, err error) {
	if c.Logger == nil {
		return
	}
	l.tracker.Failed(faillog.Failure{
		Key: "connection lost", Level: slog.LevelWarn,
		Msg:   "httpwatch: request failed after a lost connection",
		Again: "httpwatch: request failed after a lost connection",
		Attrs: []any{"host", c.host.Host},
		Err:   err,
	})
}

// answered notes a response: after a loss, the server answers again. It
// costs one atomic load while nothing was lost.
func (l *lostConns) answered(c *Client) {
	if l.pending.Load() && l.pending.CompareAndSwap(true, false) && c.Logger != nil {
		l.tracker.Recovered("httpwatch: the server answers again", "host", c.host.Host)
	}
}

// lost notes err, a request that the lost connection whose error is
// cause failed: the connection's first is reported, the others counted.
// One lock around both, so that no request is counted before its
// connection is reported.
func (l *lostConns) lost(c *Client, cause, err error, within string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.reported {
		if e == cause {
			l.count(c, err)
			return
		}
	}
	l.reported[l.next] = cause
	l.next = (l.next + 1) % len(l.reported)
	l.report(c, within)
}

// lostCause returns the error net/http failed a request with when its
// HTTP/2 connection's ping went unanswered, or nil.
func lostCause(err error) error {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == pingLost {
			return e
		}
	}
	return nil
}

// explainLost turns the error of a request on a connection the HTTP/2
// health check closed into one wrapping ErrConnectionLost, and says once
// per connection, at Warn, what happened. Other errors are returned as
// they are.
func (c *Client) explainLost(err error) error {
	cause := lostCause(err)
	if cause == nil {
		return err
	}
	within := "in time"
	if c.pingTimeout > 0 {
		within = "within " + c.pingTimeout.String()
	}
	err = fmt.Errorf("%w: no answer to an HTTP/2 ping %s: %w", ErrConnectionLost, within, err)
	c.lost.lost(c, cause, err, within)
	return err
}

// lostBody explains a read that failed because the health check closed
// the connection under it.
type lostBody struct {
	io.ReadCloser
	c *Client
}

func (b *lostBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = b.c.explainLost(err)
	}
	return n, err
}

// watchLost makes the body of an HTTP/2 response explain a lost
// connection; only HTTP/2 connections are pinged.
func (c *Client) watchLost(resp *http.Response) {
	if resp.ProtoMajor == 2 {
		resp.Body = &lostBody{ReadCloser: resp.Body, c: c}
	}
}
