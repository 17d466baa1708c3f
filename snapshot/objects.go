package snapshot

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/listwatch/listwatch/raw"
)

// chunkSize is the size of the reads of a snapshot's objects. Workers turn
// the objects of one chunk into Objects while the next is read and summed.
const chunkSize = 512 << 10

// chunk is one read: the objects wholly in it, and what a worker made of
// them.
type chunk struct {
	buf   []byte
	forms [][]byte // each object's binary form, in buf
	out   []*raw.Object
	bytes int64 // of the objects' JSON
	err   error
}

// build turns c's forms into Objects. UnmarshalBinary is memory-safe
// whatever the bytes; they are trusted only once the checksum matches.
func (c *chunk) build() {
	objs := make([]raw.Object, len(c.forms))
	c.out = make([]*raw.Object, len(c.forms))
	for i, b := range c.forms {
		if err := objs[i].UnmarshalBinary(b); err != nil {
			c.err = fmt.Errorf("%w: %w", ErrCorrupt, err)
			return
		}
		c.bytes += int64(len(objs[i].Raw()))
		c.out[i] = &objs[i]
	}
}

// objectReader reads the objects after a snapshot's header: it reads and
// sums chunks in the caller's goroutine and hands each to a pool of
// workers that build its Objects.
type objectReader struct {
	d         *decoder
	maxObject int
	left      int // objects still to find
	jobs      chan *chunk
	free      chan []byte // buffers no worker reads
	made      int         // buffers made, at most cap(free)
	chunks    []*chunk
	eof       bool
}

// readObjects reads n objects and the checksum after them.
func (d *decoder) readObjects(n, maxObject int) ([]*raw.Object, int64, error) {
	workers := min(runtime.GOMAXPROCS(0), 4)
	or := &objectReader{d: d, maxObject: maxObject, left: n,
		jobs: make(chan *chunk), free: make(chan []byte, workers+2)}
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for c := range or.jobs {
				c.build()
				or.free <- c.buf
			}
		})
	}
	err := or.run()
	close(or.jobs)
	wg.Wait()
	if err != nil {
		return nil, 0, err
	}
	objs := make([]*raw.Object, 0, n)
	var total int64
	for i, c := range or.chunks {
		if c.err != nil {
			return nil, 0, fmt.Errorf("chunk %d: %w", i, c.err)
		}
		objs = append(objs, c.out...)
		total += c.bytes
	}
	return objs, total, nil
}

// run reads chunk after chunk, each starting with what the last left of
// an object, until every object and the checksum are read.
func (or *objectReader) run() error {
	var carry []byte
	for {
		buf := or.buffer(len(carry))
		n := copy(buf, carry)
		n, err := or.fill(buf, n)
		if err != nil {
			return err
		}
		c, rest, err := or.split(buf[:n])
		if err != nil {
			return err
		}
		if len(c.forms) > 0 {
			or.chunks = append(or.chunks, c)
			or.jobs <- c // the worker hands buf back once done with it
		} else {
			or.free <- buf // never blocks: it is one of cap(free)
		}
		if or.left == 0 {
			return or.trailer(rest)
		}
		if or.eof {
			return fmt.Errorf("%w: cut short", ErrCorrupt)
		}
		// rest is the end of a buffer a worker may be reading or hand
		// back: only this goroutine writes buffers, and copy handles the
		// overlap when the next is the same.
		carry = rest
	}
}

// buffer returns a buffer for the next chunk, big enough for the next
// object, whose first bytes (carried) it will start with.
func (or *objectReader) buffer(carried int) []byte {
	need := chunkSize
	if carried >= 4 {
		// The carried object did not fit a whole buffer: make one that
		// holds it (its size is within the limits, split checked).
		need = max(need, 4+int(binary.LittleEndian.Uint32(or.d.carryHead[:])))
	}
	var buf []byte
	if or.made < cap(or.free) {
		select {
		case buf = <-or.free:
		default:
			or.made++
		}
	} else {
		buf = <-or.free // wait for a worker: memory stays bounded
	}
	if cap(buf) < need {
		buf = make([]byte, need)
	}
	return buf[:cap(buf)]
}

// fill reads into buf after its first n bytes until it is full or the
// input ends.
func (or *objectReader) fill(buf []byte, n int) (int, error) {
	for n < len(buf) && !or.eof {
		m, err := or.d.r.Read(buf[n:])
		n += m
		if errors.Is(err, io.EOF) {
			or.eof = true
		} else if err != nil {
			return n, fmt.Errorf("snapshot read: %w", err)
		}
	}
	return n, nil
}

// split finds the objects wholly in b, sums them and returns them as a
// chunk, with what follows them.
func (or *objectReader) split(b []byte) (*chunk, []byte, error) {
	c := &chunk{buf: b}
	d := or.d
	pos := 0
	for or.left > 0 && pos+4 <= len(b) {
		n := int64(binary.LittleEndian.Uint32(b[pos:]))
		if n > int64(or.maxObject) {
			return nil, nil, fmt.Errorf("%w: object of %d bytes, limit %d", ErrTooLarge, n, or.maxObject)
		}
		if 4+n > d.left {
			return nil, nil, fmt.Errorf("%w: object of %d bytes past the end", ErrCorrupt, n)
		}
		if int64(pos)+4+n > int64(len(b)) {
			copy(d.carryHead[:], b[pos:pos+4])
			break
		}
		c.forms = append(c.forms, b[pos+4:pos+4+int(n)])
		pos += 4 + int(n)
		d.left -= 4 + n
		or.left--
	}
	d.crc.Write(b[:pos])
	return c, b[pos:], nil
}

// trailer checks the checksum, which rest begins, and that nothing follows.
func (or *objectReader) trailer(rest []byte) error {
	sum := or.d.crc.Sum32()
	if len(rest) < 4 {
		var n [4]byte
		copy(n[:], rest)
		if _, err := io.ReadFull(or.d.r, n[len(rest):]); err != nil {
			return fmt.Errorf("%w: no checksum", ErrCorrupt)
		}
		rest = n[:]
	}
	if got := binary.LittleEndian.Uint32(rest); got != sum {
		return fmt.Errorf("%w: checksum %08x, content sums to %08x", ErrCorrupt, got, sum)
	}
	if len(rest) > 4 {
		return fmt.Errorf("%w: bytes after the checksum", ErrCorrupt)
	}
	if _, err := or.d.r.ReadByte(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: bytes after the checksum", ErrCorrupt)
	}
	return nil
}
