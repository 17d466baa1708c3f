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
// the server, not a byte, for longer than its bound while waiting for it
// (decision 36; see ListOptions.IdleTimeout): the connection is taken to
// be silent, as through a black-holed path or a wedged server, which
// nothing else would report on HTTP/1.1. IsProbableEOF reports it: the
// watch resumes from its resourceVersion.
var ErrWatchIdle = errors.New("watch heard nothing")

// ErrNoBookmarks is wrapped instead of ErrWatchIdle by the error of a
// watch that allowed bookmarks, on a server not yet heard to send them,
// and heard none before its bound (decision 36): the server may send
// none (its watch cache off), or the connection went silent. Either way
// the watch resumes (IsProbableEOF reports it), and the Client's watches
// wait for their own timeout plus 30 s until a bookmark comes in time.
var ErrNoBookmarks = errors.New("no bookmark from the server")

// idleGrace is how long past its TimeoutSeconds a watch not held to
// bookmarks waits for the server to end it, and noTimeoutIdle how long a
// watch without TimeoutSeconds waits: the API server ends a watch that
// asked for no timeout within an hour (its --min-request-timeout, 30 min,
// doubled at most).
const (
	idleGrace     = 30 * time.Second
	noTimeoutIdle = time.Hour + idleGrace
)

// What a Client has learned of whether its server breaks the silence of a
// quiet watch with bookmarks (decision 36). It starts hopeful: a server
// not yet heard of is taken to send them, so the first watch of a process
// is guarded from its start too.
const (
	bookmarksHoped int32 = iota // nothing learned yet
	bookmarksSent               // a watch heard one in time: for good
	bookmarksNone               // a hopeful watch heard none before its bound
)

// newWatchdog returns the watchdog of body, a watch of c with opts, nil
// when opts ask for no bound (see ListOptions.IdleTimeout): IdleTimeout
// for a watch without bookmarks, or while the server is taken to send them
// in time; else TimeoutSeconds plus 30 s (an hour and 30 s without).
func newWatchdog(c *Client, body io.ReadCloser, opts ListOptions) *watchdog {
	if opts.IdleTimeout < 0 {
		return nil
	}
	d := &watchdog{ReadCloser: body, c: c, opened: c.clock.Now(), wake: make(chan struct{}, 1), quit: make(chan struct{})}
	limit := noTimeoutIdle
	if opts.TimeoutSeconds > 0 {
		limit = time.Duration(opts.TimeoutSeconds)*time.Second + idleGrace
	}
	switch learned := c.bookmarks.Load(); {
	case opts.IdleTimeout > 0 && !opts.AllowWatchBookmarks:
		limit = opts.IdleTimeout
	case opts.IdleTimeout > 0:
		d.tight, d.hopeful = opts.IdleTimeout, learned == bookmarksHoped
		if learned != bookmarksNone {
			limit = d.tight
		}
	}
	d.limit.Store(int64(limit))
	return d
}

// A watchdog ends a watch whose body has waited for the server longer
// than its bound: the one goroutine that watches over a watch (decision
// 36). Only a read that waits counts. A consumer that stops taking events
// (a slow handler) stops the framing goroutine on its hand-off, not in a
// read, so its time is never the server's silence.
//
// Each read of the body resets a timer to the bound, and stops it when it
// returns: while bytes flow the watchdog sleeps, and a quiet stream costs
// one wake-up per bound. The goroutine starts with the first read and
// ends with the body: a watch nobody reads holds none.
type watchdog struct {
	io.ReadCloser
	c      *Client
	tight  time.Duration // the bound while the server sends bookmarks; 0: not held to them
	opened time.Time

	limit   atomic.Int64 // the bound now, in ns
	reading atomic.Int64 // when the pending read began (UnixNano); 0: none
	fired   atomic.Bool
	// hopeful: opened before the client heard its server send bookmarks;
	// hoped: it fired having heard none, and the client has not since.
	hopeful bool
	hoped   atomic.Bool
	// heard is set by the consumer at a bookmark; bookmarked is when the
	// last came, the consumer's own.
	heard      atomic.Bool
	bookmarked time.Time

	timer      clock.Timer
	wake       chan struct{} // the bound changed: look again
	start, end sync.Once
	quit       chan struct{} // closed by end: the goroutine returns
}

func (d *watchdog) Read(p []byte) (int, error) {
	d.start.Do(func() {
		d.timer = d.c.clock.NewTimer(time.Duration(d.limit.Load()))
		d.timer.Stop()
		go d.watch()
	})
	if d.timer == nil { // closed before its first read
		return d.ReadCloser.Read(p)
	}
	d.reading.Store(d.c.clock.Now().UnixNano())
	d.timer.Reset(time.Duration(d.limit.Load()))
	n, err := d.ReadCloser.Read(p)
	d.timer.Stop()
	d.reading.Store(0)
	if err != nil {
		d.stop() // no read will wait again
		switch limit := time.Duration(d.limit.Load()); {
		case d.hoped.Load():
			err = fmt.Errorf("%w within %v of the watch's start: it may send none (its watch cache off), or the connection went silent; "+
				"watches now wait for their own timeout plus %v until one comes in time", ErrNoBookmarks, limit, idleGrace)
		case d.fired.Load():
			err = fmt.Errorf("%w: nothing from the server for %v", ErrWatchIdle, limit)
		}
	}
	return n, err
}

func (d *watchdog) Close() error {
	d.stop()
	return d.ReadCloser.Close()
}

// stop ends the goroutine, if it runs, and forbids it to start.
func (d *watchdog) stop() {
	d.start.Do(func() {})
	d.end.Do(func() { close(d.quit) })
}

// bookmark notes a bookmark the consumer took, but for the one ending a
// watch-list's initial events, which any server sends. One that came
// within the tight bound of the watch's opening or of its previous
// bookmark shows that the server sends them in time (a server without a
// watch cache sends one only after ten minutes without an event, etcd's
// progress interval): the client holds every watch to the bound from its
// start from now on, and this one from now.
func (d *watchdog) bookmark(ev Event) {
	if d.tight == 0 || endsInitialEvents(ev) {
		return
	}
	now := d.c.clock.Now()
	since := d.bookmarked
	if since.IsZero() {
		since = d.opened
	}
	d.bookmarked = now
	d.heard.Store(true)
	if now.Sub(since) > d.tight {
		return
	}
	d.c.bookmarks.Store(bookmarksSent)
	if d.limit.Swap(int64(d.tight)) != int64(d.tight) {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// endsInitialEvents reports whether ev is the bookmark ending a
// watch-list's initial events.
func endsInitialEvents(ev Event) bool {
	return ev.Object != nil && ev.Object.Get(`metadata.annotations.k8s\.io/initial-events-end`).String() == "true"
}

// watch closes the body once a read has waited for the bound. A tick that
// finds no read waiting is stale (the read returned since); one that finds
// a read that has not waited the bound yet, after a change of the bound or
// a race with the read's own reset, sets the timer for the rest.
func (d *watchdog) watch() {
	for {
		select {
		case <-d.timer.C():
		case <-d.wake:
		case <-d.quit:
			d.timer.Stop()
			return
		}
		since := d.reading.Load()
		if since == 0 {
			continue
		}
		if left := time.Duration(d.limit.Load()) - d.c.clock.Now().Sub(time.Unix(0, since)); left > 0 {
			d.timer.Reset(left)
			continue
		}
		if d.hopeful && !d.heard.Load() {
			// Hoped for bookmarks and heard none: fall back, once per
			// client, until one comes in time.
			d.c.bookmarks.CompareAndSwap(bookmarksHoped, bookmarksNone)
			d.hoped.Store(d.c.bookmarks.Load() == bookmarksNone)
		}
		d.fired.Store(true)
		d.c.CloseIdleConnections() // they went the same way, and may be as silent
		d.ReadCloser.Close()       // unblocks the read, which reports ErrWatchIdle
		return
	}
}
