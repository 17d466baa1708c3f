package httpwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
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
	return newStreamWatcher(resp.Body, cancel, "WATCH", path, rc.scanOptions()), nil
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
	rd         *reader
	so         *scanOptions
	events     int // events returned, to name the one a DecodeError is about
	stopped    atomic.Bool
	closeOnce  sync.Once
	err        error // sticky: returned by every Next after the first failure
}

func newStreamWatcher(body io.ReadCloser, cancel context.CancelFunc, verb, path string, so *scanOptions) *streamWatcher {
	rd := newReader(body, so.maxFrame, false)
	rd.sc.spans = &spanNotes{level: 3} // the members of the event's object
	return &streamWatcher{body: body, cancel: cancel, verb: verb, path: path, so: so, rd: rd}
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
	c, err := w.rd.peek()
	if err != nil {
		if err == io.EOF {
			return Event{}, io.EOF
		}
		return Event{}, fmt.Errorf("%s %s: read stream: %w", w.verb, w.path, err)
	}
	at := w.rd.offset()
	if c != '{' {
		return Event{}, w.decodeError(at, fmt.Errorf("expected a JSON object, found %q", c))
	}
	frame, err := w.rd.container()
	if err != nil {
		if w.rd.fromSource(err) {
			return Event{}, fmt.Errorf("%s %s: read stream at byte %d: %w", w.verb, w.path, at, err)
		}
		return Event{}, w.decodeError(at, err)
	}
	ev, err := decodeEvent(frame, &w.rd.sc, w.so)
	if err != nil {
		var se *StatusError
		if errors.As(err, &se) {
			se.Verb, se.Path = w.verb, w.path
		}
		return Event{}, w.decodeError(at, err)
	}
	if se, ok := ev.Err.(*StatusError); ok {
		se.Verb, se.Path = w.verb, w.path
	}
	w.events++
	return ev, nil
}

// decodeError is the error for the event starting at stream offset at.
func (w *streamWatcher) decodeError(at int64, err error) error {
	return &DecodeError{Verb: w.verb, Path: w.path, Offset: at, Err: fmt.Errorf("event %d: %w", w.events+1, err)}
}

// decodeEvent turns one frame, {"type": ..., "object": {...}}, into an
// Event. sc is the scanner that framed it: its child is where the frame's
// last container member ends, normally the object, which then needs no
// second scan, nor do the object's members it noted.
func decodeEvent(frame []byte, sc *frameScanner, so *scanOptions) (Event, error) {
	child := sc.child
	it := newObjectIter(frame, 0)
	var typ []byte
	var obj valueRange
	for {
		m, ok := it.nextKey()
		if !ok {
			break
		}
		if string(m.key) == "object" && it.i == child.start && child.end > child.start {
			obj, it.i = child, child.end
			continue
		}
		_, end, err := skipValue(frame, it.i)
		if err != nil {
			return Event{}, fmt.Errorf("value of %q: %w", m.key, err)
		}
		switch string(m.key) {
		case "type":
			typ = frame[it.i:end]
		case "object":
			obj = valueRange{it.i, end}
		}
		it.i = end
	}
	if it.err != nil {
		return Event{}, it.err
	}
	if typ == nil || typ[0] != '"' {
		return Event{}, errors.New(`event has no "type" string`)
	}
	t, err := keyString(typ)
	if err != nil {
		return Event{}, err
	}
	ev := Event{Type: EventType(t)}
	switch ev.Type {
	case Added, Modified, Deleted, Bookmark, Error:
	default:
		return Event{}, fmt.Errorf("%w %q", ErrInvalidEventType, t)
	}
	if obj.end == 0 || frame[obj.start] != '{' {
		return Event{}, fmt.Errorf("%s event has no object", t)
	}
	src := frame[obj.start:obj.end]
	switch ev.Type {
	case Bookmark:
		// Only metadata matters in a bookmark; the transform is for objects.
		ev.Object, err = buildObject(src, buildOptions{})
	case Error:
		ev.Object, err = buildObject(src, buildOptions{})
		if err == nil {
			if isStatus(ev.Object.String()) {
				ev.Err, ev.Object = statusFromJSON(ev.Object.String()), nil
			} else {
				ev.Err = &UnexpectedObjectError{Object: ev.Object}
			}
		}
	default:
		known := sc.spans.noted()
		known.base = obj.start
		ev.Object, err = so.object(src, nil, known)
	}
	if err != nil {
		return Event{}, fmt.Errorf("%s event: %w", t, err)
	}
	return ev, nil
}
