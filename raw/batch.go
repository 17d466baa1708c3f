package raw

import (
	"errors"
	"iter"
	"sync/atomic"
)

// Batch is the frames of a watch stream that one read completed, in order,
// for a reader that frames the stream on one goroutine and builds the
// objects on another (see EventReader.Batches). Its frames point into a
// buffer the batch holds, so they stay valid after later reads, until
// Release.
type Batch struct {
	Frames []Frame
	// Err, set on the last batch only, ends the stream after Frames:
	// io.EOF at a clean end, otherwise what Next would have returned.
	Err error

	buf   []byte
	spans []valueRange // the frames' notes, which the scanner reuses
	notes []memberNote
	spare chan *Batch  // where Release hands it back
	quiet *atomic.Bool // the batcher's: the stream has caught up
}

// Release hands the batch's buffer back to the reader. The batch and its
// frames must not be used afterwards.
func (b *Batch) Release() {
	clear(b.Frames) // the frames point into buf
	b.Frames, b.Err = b.Frames[:0], nil
	b.spans, b.notes = b.spans[:0], b.notes[:0]
	if b.quiet.Load() && cap(b.buf) > quietBufMax {
		return // a buffer of a burst that is over: let it go (decision 35)
	}
	select {
	case b.spare <- b:
	default: // enough are spare already
	}
}

// keep copies notes the scanner will reuse into the batch.
func (b *Batch) keep(k knownSpans) knownSpans {
	at := len(b.spans)
	b.spans = append(append(b.spans, k.spans...), k.deep...)
	k.spans, k.deep = b.spans[at:at+len(k.spans):at+len(k.spans)], b.spans[at+len(k.spans):]
	if k.members != nil {
		at := len(b.notes)
		b.notes = append(b.notes, k.members...)
		k.members = b.notes[at:]
	}
	return k
}

// spareBatches bounds the batches a reader keeps for reuse; more in flight
// are left to the collector when released.
const spareBatches = 4

// quietBufMax is the largest buffer a quiet stream keeps: twice its own
// size, so that a buffer a frame over half of it grew is kept too.
const quietBufMax = 2 * initialBufSize

// errBatchesStopped ends a read once the consumer of batches stopped.
var errBatchesStopped = errors.New("batches stopped")

// batcher collects what a reader frames into batches and hands each out
// before the reader reads again, giving the reader another buffer, so that
// the frames handed out are never overwritten.
type batcher struct {
	rd      *reader
	cur     *Batch
	spare   chan *Batch
	yield   func(*Batch) bool
	stopped bool // yield returned false
	// quiet is set at a hand-out after a read that did not fill its room:
	// the stream has caught up with the server. Batches then give back
	// the buffers of the burst before it rather than keep them for the
	// watch's life.
	quiet atomic.Bool
}

func newBatcher(rd *reader, yield func(*Batch) bool) *batcher {
	bt := &batcher{rd: rd, spare: make(chan *Batch, spareBatches), yield: yield}
	bt.cur = bt.spareBatch()
	rd.beforeRead = bt.handOut
	return bt
}

// add appends a frame of the reader's buffer to the current batch.
func (bt *batcher) add(f Frame) {
	f.known = bt.cur.keep(f.known)
	bt.cur.Frames = append(bt.cur.Frames, f)
}

// handOut yields the current batch, if it has frames, with the reader's
// buffer; the reader goes on in another.
func (bt *batcher) handOut() error {
	b := bt.cur
	if len(b.Frames) == 0 {
		return nil // nothing points into the buffer yet
	}
	if bt.rd.flowing {
		bt.quiet.Store(false)
	} else if !bt.quiet.Swap(true) {
		// Caught up: batches released from now on let their burst's
		// buffers go, and the spares let theirs go now. (One released
		// just before the Swap may keep its buffer until it is reused,
		// when handOver replaces it.)
		bt.dropBurstSpares()
	}
	bt.cur = bt.spareBatch()
	b.buf = bt.rd.handOver(bt.cur.buf)
	bt.cur.buf = nil
	if !bt.yield(b) {
		bt.stopped = true
		return errBatchesStopped
	}
	return nil
}

// end yields the last batch, with err, and detaches from the reader, whose
// buffer the batch keeps.
func (bt *batcher) end(err error) {
	bt.rd.beforeRead = nil
	if bt.stopped {
		return
	}
	b := bt.cur
	b.Err, b.buf = err, bt.rd.buf
	bt.rd.buf, bt.rd.pooled = nil, false
	bt.yield(b)
}

// spareBatch returns a released batch, or a new one.
func (bt *batcher) spareBatch() *Batch {
	select {
	case b := <-bt.spare:
		return b
	default:
		return &Batch{spare: bt.spare, quiet: &bt.quiet}
	}
}

// dropBurstSpares lets go of the spare batches whose buffers are larger
// than a quiet stream keeps, and keeps the others.
func (bt *batcher) dropBurstSpares() {
	for range len(bt.spare) {
		var b *Batch
		select {
		case b = <-bt.spare:
		default:
			return
		}
		if cap(b.buf) > quietBufMax {
			continue
		}
		select {
		case bt.spare <- b:
		default:
		}
	}
}

// Batches frames the stream to its end, yielding a Batch whenever frames
// are complete and the reader is about to read the body again (where it
// may wait for the server), so a quiet stream holds back no frame. The last
// batch carries Err. Frames in a yielded batch are not overwritten by
// later reads; the consumer releases each batch when done with its frames.
// Use Batches or Next on a reader, not both.
func (er *EventReader) Batches() iter.Seq[*Batch] {
	return func(yield func(*Batch) bool) {
		bt := newBatcher(er.rd, yield)
		for {
			f, err := er.Next()
			if err != nil {
				bt.end(err)
				return
			}
			bt.add(f)
		}
	}
}

// handOver gives the reader the buffer spare (or a new one if it is too
// small) with the unread bytes moved to its front, and returns the buffer
// it had, which the frames read so far point into.
func (rd *reader) handOver(spare []byte) []byte {
	size := len(rd.buf)
	if size > maxPooledBuf {
		// Grown for a huge frame, which is now handed out: go back to the
		// flowing size, and let the huge buffers go (the spare check
		// below), rather than keep up to four of them for the watch's life.
		size = flowBufSize
	}
	if rd.flowing && size < flowBufSize && rd.max >= flowBufSize {
		size = flowBufSize
	}
	if !rd.flowing && size > initialBufSize {
		size = initialBufSize // caught up: back to the quiet size (decision 35)
	}
	if rd.w-rd.r > size/2 { // a long value is being assembled: room to grow
		size = min(max(2*size, 2*(rd.w-rd.r)), rd.max+1)
	}
	if cap(spare) < size || cap(spare) > 2*size {
		spare = make([]byte, size)
	}
	old := rd.buf
	rd.buf = spare[:cap(spare)]
	n := copy(rd.buf, old[rd.r:rd.w])
	rd.off += int64(rd.r)
	rd.r, rd.w = 0, n
	return old
}
