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
//     (conformance 1). A refused connection: an error satisfying
//     IsConnectionRefused (conformance 22).
//   - The request failed as a connection that ended or timed out
//     (IsProbableEOF), as during a server restart: an empty Watcher whose
//     Next returns io.EOF at once, not an error (conformance 2), so the
//     reflector sees a very short watch and relists.
//   - Then, from Next: io.EOF when the server ended the stream between
//     frames (conformance 4, a clean end); an error satisfying IsProbableEOF
//     (io.ErrUnexpectedEOF, reset, ...) when the connection broke, which
//     client-go ends silently and a reflector should treat as a clean end;
//     a *DecodeError for a malformed stream, which client-go reports as a
//     synthetic ERROR event.
//
// The server must send the response headers within the client's
// WatchHeaderTimeout (an error wrapping ErrResponseHeaderTimeout otherwise);
// after that the stream has no client-side timeout: opts.TimeoutSeconds and
// ctx bound it. Stop (or cancelling ctx) ends it.
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
		ended := ctx.Err() != nil
		cancel()
		if !ended && IsProbableEOF(err) {
			return emptyWatcher{}, nil
		}
		return nil, fmt.Errorf("WATCH %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		return nil, rc.explain(ctx, statusFromResponse("WATCH", path, resp, rc.c.now()))
	}
	return newStreamWatcher(resp.Body, cancel, "WATCH", path, rc.decoder()), nil
}

// emptyWatcher is a stream that has already ended.
type emptyWatcher struct{}

func (emptyWatcher) Next() (Event, error) { return Event{}, io.EOF }
func (emptyWatcher) Stop()                {}

// streamWatcher decodes events from a watch body on the caller's goroutine:
// it starts none, so there is nothing to leak.
type streamWatcher struct {
	body       io.ReadCloser
	cancel     context.CancelFunc
	verb, path string
	events     *raw.EventReader
	n          int // events returned, to name the one a DecodeError is about
	stopped    atomic.Bool
	closeOnce  sync.Once
	err        error  // sticky: returned by every Next after the first failure
	beforeRead func() // see NotifyRead
}

func newStreamWatcher(body io.ReadCloser, cancel context.CancelFunc, verb, path string, d *raw.Decoder) *streamWatcher {
	w := &streamWatcher{body: body, cancel: cancel, verb: verb, path: path}
	w.events = d.Events(notifyingBody{w})
	return w
}

// NotifyRead makes Next call fn before each read of the body (see
// ReadNotifier).
func (w *streamWatcher) NotifyRead(fn func()) { w.beforeRead = fn }

// notifyingBody is the body as the decoder reads it: each read is
// announced first.
type notifyingBody struct{ w *streamWatcher }

func (b notifyingBody) Read(p []byte) (int, error) {
	if fn := b.w.beforeRead; fn != nil {
		fn()
	}
	return b.w.body.Read(p)
}

// Stop ends the stream: it closes the body, which unblocks a Next in
// progress. It is idempotent and safe to call from any goroutine; after it,
// Next returns io.EOF and delivers no more events (conformance 5).
func (w *streamWatcher) Stop() {
	w.stopped.Store(true)
	w.close()
}

func (w *streamWatcher) close() {
	w.closeOnce.Do(func() {
		w.cancel()
		w.body.Close()
	})
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
	f, err := w.events.Next()
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
				ev.Err = &UnexpectedObjectError{Object: ev.Object}
			}
		}
	default:
		return Event{}, fmt.Errorf("%w %q", ErrInvalidEventType, f.Type)
	}
	if err != nil {
		return Event{}, err
	}
	return ev, nil
}
