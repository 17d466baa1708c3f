package raw

import (
	"fmt"
	"io"
)

// framer drives the watch path's reader the way a stream does, frame after
// frame, without decoding events, so that tests, fuzzing and benchmarks can
// exercise frame boundaries alone.
//
// It splits a byte stream into consecutive top-level JSON objects or
// arrays, the framing of a Kubernetes watch body. It finds each value's end
// itself (brackets outside strings, escapes inside them), checking its
// grammar on the way, and so does not depend on newlines or on how the
// stream was chunked: a value may be split at any byte and several may
// arrive in one read. Whitespace between values is skipped; anything else
// between them is an error.
type framer struct {
	rd  *reader
	err error
}

// newFramer returns a framer reading r. A value longer than maxFrameSize
// bytes is an error wrapping ErrFrameTooLarge; maxFrameSize <= 0 means
// DefaultMaxFrameSize. The buffer grows to the largest frame seen.
func newFramer(r io.Reader, maxFrameSize int) *framer {
	rd := newReader(r, maxFrameSize, false)
	return &framer{rd: rd}
}

// Next returns the next frame. The slice is valid only until the following
// call. At a clean end of the stream (between frames) it returns io.EOF; an
// end inside a frame is io.ErrUnexpectedEOF. Errors are sticky.
func (f *framer) Next() ([]byte, error) {
	if f.err != nil {
		return nil, f.err
	}
	c, err := f.rd.peek()
	if err != nil {
		f.err = err
		return nil, err
	}
	if c != '{' && c != '[' {
		f.err = fmt.Errorf("frame at byte %d: expected a JSON object or array, found %q", f.rd.offset(), c)
		return nil, f.err
	}
	b, err := f.rd.container()
	if err != nil {
		f.err = fmt.Errorf("frame: %w", err)
		return nil, f.err
	}
	return b, nil
}

// Offset is the stream position just past the last frame returned.
func (f *framer) Offset() int64 { return f.rd.offset() }
