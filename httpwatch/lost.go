package httpwatch

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrConnectionLost is wrapped by the error of every request, and every
// read of a response body, that failed because the transport gave its
// connection up as silent: an HTTP/2 ping went unanswered (see
// kubeconfig.Config.PingAfter). IsProbableEOF reports it, so a watch on
// the connection resumes from its resourceVersion and a get or list is
// retried on a new connection. The client does not log it: whoever meets
// it says it, by its row of the failure table (decision 38).
var ErrConnectionLost = errors.New("connection lost")

// pingLost is net/http's message for a connection its HTTP/2 health check
// closed. net/http exports no error value to match.
const pingLost = "http2: client connection lost"

// explainLost turns the error of a request on a connection the HTTP/2
// health check closed into one wrapping ErrConnectionLost that says what
// happened, to which server. Other errors are returned as they are.
func (c *Client) explainLost(err error) error {
	lost := false
	for e := err; e != nil && !lost; e = errors.Unwrap(e) {
		lost = e.Error() == pingLost
	}
	if !lost {
		return err
	}
	within := "in time"
	if c.pingTimeout > 0 {
		within = "within " + c.pingTimeout.String()
	}
	return fmt.Errorf("%w: no answer to an HTTP/2 ping %s: connection to %s closed: %w", ErrConnectionLost, within, c.host.Host, err)
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
