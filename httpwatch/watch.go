package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/raw"
)

// Watch opens a watch stream: GET ?watch=1 with opts. It returns once the
// server has answered; events are then pulled with Next.
//
// How the outcomes map (docs/behaviour.md, items 1, 2 and 4):
//   - HTTP 200: a Watcher.
//   - Any other status: a *StatusError from the body, no Watcher
//     (conformance 1). A refused connection: an error wrapping
//     syscall.ECONNREFUSED (conformance 22).
//   - The request failed before the server answered: the error, which
//     says how (a dial, DNS, TLS handshake or header timeout, a reset, an
//     EOF, ErrConnectionLost, a refused connection; IsProbableEOF
//     reports most), so the reflector resumes the watch from its version after a
//     backoff (decision 38; client-go returns an empty stream here, which
//     its reflector takes for a very short watch and relists after).
//   - Then, from Next: io.EOF when the server ended the stream between
//     frames (conformance 4, a clean end); an error satisfying IsProbableEOF
//     (io.ErrUnexpectedEOF, reset, ...) when the connection broke, which
//     client-go ends silently and a reflector should treat as a clean end;
//     a *DecodeError for a malformed stream, which client-go reports as a
//     synthetic ERROR event.
//
// The server must send the response headers within the client's
// WatchHeaderTimeout (an error wrapping ErrResponseHeaderTimeout otherwise);
// after that opts.TimeoutSeconds and ctx bound the stream, and
// opts.IdleTimeout its silence (an error wrapping ErrWatchIdle, which
// IsProbableEOF reports). Stop (or cancelling ctx) ends it.
func (rc *ResourceClient) Watch(ctx context.Context, opts ListOptions) (Watcher, error) {
	path, err := rc.res.Path()
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	u := rc.c.host.JoinPath(path)
	u.RawQuery = opts.Values(true).Encode()
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("WATCH %s: %w", path, err)
	}
	accept := acceptJSON
	if rc.MetadataOnly {
		accept = acceptMetaObject
	}
	req.Header.Set("Accept", accept)
	resp, err := rc.c.watch.Do(req)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("WATCH %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return nil, rc.explain(ctx, statusFromResponse("WATCH", path, resp, rc.c.clock.Now()))
	}
	return newWatch(rc.c, resp.Body, cancel, path, rc.decoder(), opts), nil
}

// newWatch returns the watcher of the watch body of c, with opts, whose
// context cancel ends, and its watchdog (decision 36).
func newWatch(c *Client, body io.ReadCloser, cancel context.CancelFunc, path string, d *raw.Decoder, opts ListOptions) *streamWatcher {
	dog := newWatchdog(c, body, opts)
	if dog != nil {
		body = dog
	}
	w := newStreamWatcher(body, cancel, "WATCH", path, d)
	w.dog = dog
	return w
}

// streamWatcher decodes events from a watch body in two stages: a goroutine
// of its own, started by the first Next, reads the body and frames and
// checks the events (raw.EventReader.Batches), while Next builds their
// objects, so on two cores the one overlaps the other. They meet once per
// read of the body, not once per event. The goroutine ends with the stream
// or with Stop, which waits for it.
type streamWatcher struct {
	body       io.ReadCloser
	cancel     context.CancelFunc
	verb, path string
	events     *raw.EventReader
	n          int // events returned, to name the one a DecodeError is about
	stopped    atomic.Bool
	closeOnce  sync.Once
	err        error     // sticky: returned by every Next after the first failure
	beforeWait func()    // see NotifyRead
	dog        *watchdog // nil: no bound on the stream's silence

	start   sync.Once       // starts the framing goroutine, or, in close, forbids it
	batches chan *raw.Batch // framed, not yet built
	quit    chan struct{}   // closed by close: the framing goroutine must not wait
	done    chan struct{}   // closed once the framing goroutine has returned
	cur     *raw.Batch      // the batch Next is building from
	at      int             // the next frame of cur
}

// framedAhead bounds the batches framed and not yet built: each holds a
// read buffer, so this bounds what a slow consumer makes a watch buffer.
const framedAhead = 2

func newStreamWatcher(body io.ReadCloser, cancel context.CancelFunc, verb, path string, d *raw.Decoder) *streamWatcher {
	return &streamWatcher{
		body: body, cancel: cancel, verb: verb, path: path,
		events:  d.Events(body),
		batches: make(chan *raw.Batch, framedAhead),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// NotifyRead makes Next call fn before it waits for the stream (see
// Watcher).
func (w *streamWatcher) NotifyRead(fn func()) { w.beforeWait = fn }

// frameAhead is the framing goroutine.
func (w *streamWatcher) frameAhead() {
	defer close(w.done)
	for b := range w.events.Batches() {
		select {
		case w.batches <- b:
		case <-w.quit:
			b.Release()
			return
		}
	}
}

// frame returns the next frame the framing goroutine found, or the error
// that ended the stream there; io.EOF once the watcher is closed.
func (w *streamWatcher) frame() (raw.Frame, error) {
	for {
		if b := w.cur; b != nil {
			if w.at < len(b.Frames) {
				w.at++
				return b.Frames[w.at-1], nil
			}
			if b.Err != nil {
				return raw.Frame{}, b.Err
			}
			b.Release()
			w.cur = nil
		}
		w.start.Do(func() { go w.frameAhead() })
		select {
		case w.cur = <-w.batches:
		default:
			if fn := w.beforeWait; fn != nil {
				fn() // Next is about to wait for the server
			}
			select {
			case w.cur = <-w.batches:
			case <-w.quit:
				return raw.Frame{}, io.EOF
			}
		}
		w.at = 0
	}
}

// Stop ends the stream: it closes the body, which unblocks a Next in
// progress. It is idempotent and safe to call from any goroutine; after it,
// Next returns io.EOF and delivers no more events (conformance 5).
func (w *streamWatcher) Stop() {
	w.stopped.Store(true)
	w.close()
}

// close closes the body and waits for the framing goroutine, if it started.
func (w *streamWatcher) close() {
	w.closeOnce.Do(func() {
		w.cancel()
		w.body.Close()
		close(w.quit)
		w.start.Do(func() { close(w.done) }) // too late to start it
	})
	<-w.done
}

// Next returns the next event. It must not be called concurrently with
// itself (Stop may be).
func (w *streamWatcher) Next() (Event, error) {
	if w.stopped.Load() {
		return Event{}, io.EOF
	}
	if w.err != nil {
		return Event{}, w.err
	}
	ev, err := w.next()
	if w.stopped.Load() {
		return Event{}, io.EOF
	}
	if err != nil {
		w.err = err
		w.close()
		return Event{}, err
	}
	return ev, nil
}

func (w *streamWatcher) next() (Event, error) {
	f, err := w.frame()
	if err != nil {
		if err == io.EOF {
			return Event{}, io.EOF
		}
		var ie *raw.InputError
		if errors.As(err, &ie) {
			return Event{}, w.decodeError(ie.Offset, ie.Err)
		}
		return Event{}, fmt.Errorf("%s %s: %w", w.verb, w.path, err)
	}
	ev, err := decodeEvent(&f)
	if err != nil {
		return Event{}, w.decodeError(f.Offset, err)
	}
	if se, ok := ev.Err.(*StatusError); ok {
		se.Verb, se.Path = w.verb, w.path
	}
	if ev.Type == Bookmark && w.dog != nil {
		w.dog.bookmark(ev)
	}
	w.n++
	return ev, nil
}

// decodeError is the error for the event starting at stream offset at.
func (w *streamWatcher) decodeError(at int64, err error) error {
	return &DecodeError{Verb: w.verb, Path: w.path, Offset: at, Err: fmt.Errorf("event %d: %w", w.n+1, err)}
}

// decodeEvent turns one frame into an Event: a type the API defines, and
// its object, built as the client says for the resource's own objects, and
// as sent for a bookmark or an ERROR event (whose Status becomes Err).
func decodeEvent(f *raw.Frame) (Event, error) {
	ev := Event{Type: EventType(f.Type)}
	var err error
	switch ev.Type {
	case Added, Modified, Deleted:
		ev.Object, err = f.Object()
	case Bookmark:
		// Only metadata matters in a bookmark; the transform is for objects.
		ev.Object, err = f.Plain()
	case Error:
		ev.Object, err = f.Plain()
		if err == nil {
			if isStatus(ev.Object.String()) {
				ev.Err, ev.Object = statusFromJSON(ev.Object.String()), nil
			} else {
				ev.Err = &unexpectedObject{Object: ev.Object}
			}
		}
	default:
		return Event{}, fmt.Errorf("%w %q", errInvalidEventType, f.Type)
	}
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}
