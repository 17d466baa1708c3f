package httpwatch

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/listwatch/listwatch/clock"
)

// ErrWatchIdle is wrapped by the error of a watch that heard nothing from
// the server, not a byte, for its ListOptions.IdleTimeout while waiting
// for it (decision 36): the connection is taken to be silent, as through a
// black-holed path or a wedged server, which nothing else would report on
// HTTP/1.1. IsProbableEOF reports it: the watch resumes from its
// resourceVersion.
var ErrWatchIdle = errors.New("watch heard nothing")

// idleGrace is how long past its TimeoutSeconds a watch with no
// IdleTimeout waits for the server to end it, and noTimeoutIdle how long a
// watch with neither waits: the API server ends a watch that asked for no
// timeout within an hour (its --min-request-timeout, 30 min, doubled at
// most).
const (
	idleGrace     = 30 * time.Second
	noTimeoutIdle = time.Hour + idleGrace
)

// idleLimit is how long a watch with opts may wait for a byte.
func idleLimit(opts ListOptions) time.Duration {
	switch {
	case opts.IdleTimeout != 0:
		return max(opts.IdleTimeout, 0)
	case opts.TimeoutSeconds > 0:
		return time.Duration(opts.TimeoutSeconds)*time.Second + idleGrace
	}
	return noTimeoutIdle
}

// idleBody ends a watch body whose reads wait for the server longer than
// limit. Only a read that waits counts: a consumer that stops reading
// (a slow sink) is not the server's silence.
type idleBody struct {
	io.ReadCloser
	limit time.Duration
	clock clock.Clock
	timer clock.Timer
	// onIdle runs once when the limit is reached, before the body is
	// closed under the waiting read.
	onIdle func()

	reading atomic.Int64 // when the pending read began (UnixNano); 0: none
	fired   atomic.Bool
	// The watchdog runs from the first read until the body ends or is
	// closed: a body nobody reads holds no goroutine.
	start, end sync.Once
	quit       chan struct{} // closed by end: the watchdog returns
}

func newIdleBody(body io.ReadCloser, limit time.Duration, clk clock.Clock, onIdle func()) *idleBody {
	return &idleBody{ReadCloser: body, limit: limit, clock: clk, onIdle: onIdle, quit: make(chan struct{})}
}

func (b *idleBody) Read(p []byte) (int, error) {
	b.start.Do(func() {
		b.timer = b.clock.NewTimer(b.limit)
		b.timer.Stop()
		go b.watchdog(b.timer)
	})
	if b.timer == nil { // closed before its first read
		return b.ReadCloser.Read(p)
	}
	b.reading.Store(b.clock.Now().UnixNano())
	b.timer.Reset(b.limit)
	n, err := b.ReadCloser.Read(p)
	b.timer.Stop()
	b.reading.Store(0)
	if err != nil {
		b.stop() // no read will wait again
		if b.fired.Load() {
			err = fmt.Errorf("%w: no byte from the server for %v", ErrWatchIdle, b.limit)
		}
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.stop()
	return b.ReadCloser.Close()
}

// stop ends the watchdog, if it runs, and forbids it to start.
func (b *idleBody) stop() {
	b.start.Do(func() {})
	b.end.Do(func() { close(b.quit) })
}

// watchdog closes the body when a read has waited for limit. A stale
// tick, from a read that has returned since, is ignored.
func (b *idleBody) watchdog(timer clock.Timer) {
	for {
		select {
		case <-timer.C():
		case <-b.quit:
			timer.Stop()
			return
		}
		since := b.reading.Load()
		if since == 0 || b.clock.Now().Sub(time.Unix(0, since)) < b.limit {
			continue
		}
		b.fired.Store(true)
		if b.onIdle != nil {
			b.onIdle()
		}
		b.ReadCloser.Close() // unblocks the read, which reports ErrWatchIdle
		return
	}
}
