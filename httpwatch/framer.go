package httpwatch

import (
	"fmt"
	"io"
)

// A Framer splits a byte stream into consecutive top-level JSON objects or
// arrays, the framing of a Kubernetes watch body. It finds each value's end
// itself (brackets outside strings, escapes inside them) and so does not
// depend on newlines or on how the stream was chunked: a value may be split
// at any byte and several may arrive in one read. Whitespace between values
// is skipped; anything else between them is an error.
//
// A Framer is not safe for concurrent use.
type Framer struct {
	rd  *reader
	err error
}

// NewFramer returns a Framer reading r. A value longer than maxFrameSize
// bytes is an error wrapping ErrFrameTooLarge; maxFrameSize <= 0 means
// DefaultMaxFrameSize. The buffer grows to the largest frame seen.
func NewFramer(r io.Reader, maxFrameSize int) *Framer {
	rd := newReader(r, maxFrameSize, false)
	rd.sc.endOnly = true
	return &Framer{rd: rd}
}

// Next returns the next frame. The slice is valid only until the following
// call. At a clean end of the stream (between frames) it returns io.EOF; an
// end inside a frame is io.ErrUnexpectedEOF. Errors are sticky.
func (f *Framer) Next() ([]byte, error) {
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
func (f *Framer) Offset() int64 { return f.rd.offset() }
