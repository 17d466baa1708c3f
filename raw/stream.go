package raw

import (
	"errors"
	"fmt"
	"io"
)

// DefaultMaxFrameSize bounds one watch frame or one list item when the
// client sets no limit of its own. kube-apiserver rejects objects over about
// 1.5 MiB, so 64 MiB leaves room for any real object and stops a broken or
// hostile stream from exhausting memory.
const DefaultMaxFrameSize = 64 << 20

// ErrFrameTooLarge is wrapped by the error returned when a watch frame or a
// list item exceeds the size limit. The stream is closed afterwards: there is
// no safe place to resume inside it.
var ErrFrameTooLarge = errors.New("JSON value exceeds the frame size limit")

// A watch's buffer starts at initialBufSize: most watches are quiet and
// their events small. Once a read fills all the room it was offered, data
// is flowing faster than it is taken in, and the buffer grows to
// flowBufSize, so that every read after asks for at least readSize bytes:
// fewer, larger reads, each a system call. List buffers start that large.
const (
	initialBufSize = 32 << 10
	readSize       = 64 << 10
	flowBufSize    = 2 * readSize
)

// freeBufs recycles list read buffers. A buffer never outlives the page that
// used it: objects are copied out of it before it comes back here. Unlike a
// sync.Pool this keeps its few buffers across garbage collections, which
// during a big relist come often enough to empty a pool between pages.
// Buffers that grew past maxPooledBuf for one huge item are left to the
// collector.
var freeBufs = make(chan []byte, 4)

func getBuf() []byte {
	select {
	case b := <-freeBufs:
		return b
	default:
		return make([]byte, flowBufSize)
	}
}

func putBuf(b []byte) {
	if cap(b) > maxPooledBuf {
		return
	}
	select {
	case freeBufs <- b[:cap(b)]:
	default:
	}
}

const maxPooledBuf = 1 << 20

// reader hands out the JSON values of a byte stream one at a time, each as a
// slice of its own buffer that stays valid until the next call. A value may
// arrive split at any byte and several may share one read.
type reader struct {
	src    io.Reader
	buf    []byte
	r, w   int   // unread bytes are buf[r:w]
	off    int64 // stream offset of buf[0], for error messages
	max    int
	err    error // sticky error from src
	sc     frameScanner
	pooled bool // buf came from getBuf
	// flowing is set when a read filled all the room it was offered.
	flowing bool
	// beforeRead, if set, runs before each read of src; an error from it
	// ends the stream. EventReader.Batches hands out frames there.
	beforeRead func() error
	// strExamined counts the bytes str has looked at, so that a test can
	// check that a string spanning many reads is examined once.
	strExamined int64
}

func newReader(src io.Reader, max int, pooled bool) *reader {
	if max <= 0 {
		max = DefaultMaxFrameSize
	}
	rd := &reader{src: src, max: max}
	if pooled {
		rd.buf, rd.pooled = getBuf(), true
	} else {
		rd.buf = make([]byte, min(initialBufSize, max))
	}
	return rd
}

// release returns a pooled buffer. The reader must not be used afterwards.
func (rd *reader) release() {
	if rd.pooled {
		putBuf(rd.buf)
	}
	rd.pooled, rd.buf = false, nil
}

// fromSource reports an error that came from reading the source (a cut
// connection, a truncated body) rather than from what was read.
func (rd *reader) fromSource(err error) bool {
	return errors.Is(err, io.ErrUnexpectedEOF) || rd.err != nil && rd.err != io.EOF && errors.Is(err, rd.err)
}

// offset is the stream position of the next unread byte.
func (rd *reader) offset() int64 { return rd.off + int64(rd.r) }

// fill reads more bytes, keeping buf[r:w]. It makes room by shifting the
// unread bytes to the front, and grows the buffer when a single value
// needs more space or, once data flows, to offer each read readSize bytes.
func (rd *reader) fill() error {
	if rd.err != nil {
		return rd.err
	}
	if rd.beforeRead != nil {
		if err := rd.beforeRead(); err != nil {
			rd.err = err
			return err
		}
	}
	if rd.flowing && len(rd.buf) < flowBufSize && rd.max >= flowBufSize {
		rd.resize(flowBufSize)
	}
	if rd.r > 0 && (len(rd.buf)-rd.w < readSize || rd.r >= len(rd.buf)/2) {
		n := copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.off += int64(rd.r)
		rd.r, rd.w = 0, n
	}
	if rd.w == len(rd.buf) {
		// Full after the move above (or handOver), buf holds one
		// unfinished value from its start: at max bytes it is too large.
		if rd.w >= rd.max {
			return fmt.Errorf("%w (%d bytes)", ErrFrameTooLarge, rd.max)
		}
		rd.resize(min(max(2*len(rd.buf), initialBufSize), rd.max+1))
	}
	for range 100 {
		room := len(rd.buf) - rd.w
		n, err := rd.src.Read(rd.buf[rd.w:])
		rd.w += n
		rd.flowing = n == room
		if err != nil {
			rd.err = err
			if n > 0 {
				return nil
			}
			return err
		}
		if n > 0 {
			return nil
		}
	}
	rd.err = io.ErrNoProgress
	return rd.err
}

// resize moves the buffer's bytes to a new one of size bytes.
func (rd *reader) resize(size int) {
	nb := make([]byte, size)
	copy(nb, rd.buf[:rd.w])
	rd.buf = nb
}

// peek consumes whitespace and returns the next byte without consuming
// it. At the end of the stream it returns the source's error (io.EOF for a
// clean end).
func (rd *reader) peek() (byte, error) {
	for {
		for rd.r < rd.w && isSpace(rd.buf[rd.r]) {
			rd.r++
		}
		if rd.r < rd.w {
			return rd.buf[rd.r], nil
		}
		if err := rd.fill(); err != nil {
			return 0, err
		}
	}
}

// expect consumes the byte c (after whitespace).
func (rd *reader) expect(c byte) error {
	got, err := rd.peek()
	if err != nil {
		return unexpectedEnd(err)
	}
	if got != c {
		return fmt.Errorf("at byte %d: expected %q, found %q", rd.offset(), c, got)
	}
	rd.r++
	return nil
}

// unexpectedEnd turns a clean EOF inside a value into io.ErrUnexpectedEOF.
func unexpectedEnd(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// value returns the next whole JSON value (after whitespace), a slice of the
// buffer valid until the next call. A clean end of the stream before the
// value starts returns io.EOF; an end inside it io.ErrUnexpectedEOF.
func (rd *reader) value() ([]byte, error) {
	c, err := rd.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case c == '{' || c == '[':
		return rd.container()
	case c == '"':
		return rd.str()
	case c == '-' || c >= '0' && c <= '9' || c == 't' || c == 'f' || c == 'n':
		return rd.scalar()
	}
	return nil, fmt.Errorf("at byte %d: unexpected %q at the start of a value", rd.offset(), c)
}

// container returns the object or array that starts at rd.r, checked as
// encoding/json.Valid would.
func (rd *reader) container() ([]byte, error) {
	rd.sc.reset()
	scanned := 0 // bytes of the value scanned so far, from rd.r
	for {
		n, done := rd.sc.feed(rd.buf[rd.r+scanned : rd.w])
		scanned += n
		if rd.sc.err != nil {
			return nil, fmt.Errorf("value at byte %d: %w", rd.offset(), rd.sc.errorAt(rd.offset()))
		}
		if scanned > rd.max {
			return nil, fmt.Errorf("value at byte %d: %w (%d bytes)", rd.offset(), ErrFrameTooLarge, rd.max)
		}
		if done {
			v := rd.buf[rd.r : rd.r+scanned]
			rd.r += scanned
			return v, nil
		}
		// Not scanned: a number or literal cut by the end of what was read.
		if err := rd.fill(); err != nil {
			if errors.Is(err, ErrFrameTooLarge) {
				return nil, fmt.Errorf("value at byte %d: %w", rd.offset(), err)
			}
			return nil, unexpectedEnd(err)
		}
	}
}

// str returns a string value, quotes included. A string may span many
// reads (an unknown key may hold megabytes); each refill resumes the scan
// where the last one stopped.
func (rd *reader) str() ([]byte, error) {
	scanned := 1 // bytes examined so far, from rd.r: the opening quote
	for {
		end, _, err := stringTail(rd.buf[:rd.w], rd.r+scanned)
		rd.strExamined += int64(end - rd.r - scanned)
		if err == nil {
			v := rd.buf[rd.r:end]
			rd.r = end
			return v, nil
		}
		if err != errTruncated {
			return nil, fmt.Errorf("at byte %d: %w", rd.offset(), err)
		}
		scanned = end - rd.r
		if err := rd.fill(); err != nil {
			return nil, unexpectedEnd(err)
		}
	}
}

// scalar returns a number or literal. It ends at a delimiter or at the end of
// the stream.
func (rd *reader) scalar() ([]byte, error) {
	n := 0 // length so far, from rd.r
	for {
		for rd.r+n < rd.w && !endsScalar(rd.buf[rd.r+n]) {
			n++
		}
		if rd.r+n < rd.w {
			break
		}
		if n > rd.max {
			return nil, fmt.Errorf("value at byte %d: %w (%d bytes)", rd.offset(), ErrFrameTooLarge, rd.max)
		}
		if err := rd.fill(); err != nil {
			if err != io.EOF {
				return nil, err
			}
			break
		}
	}
	v := rd.buf[rd.r : rd.r+n]
	if !scalarOK(v) {
		return nil, fmt.Errorf("at byte %d: invalid literal %.32q", rd.offset(), v)
	}
	rd.r += n
	return v, nil
}

func endsScalar(c byte) bool {
	return isSpace(c) || c == ',' || c == '}' || c == ']' || c == ':'
}
