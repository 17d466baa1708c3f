package processor

// buffer is an unbounded FIFO of notifications kept in a chain of fixed-size
// blocks.
//
// client-go uses a growing ring, which copies everything it holds each time
// it grows and can give memory back only by copying again or once empty. A
// chain never copies: it grows by linking a block and gives memory back one
// block at a time as the handler works through it, so a burst costs memory
// only while it waits. One emptied block is kept aside for the next one
// needed, so a steady backlog allocates nothing; an empty buffer holds a
// single block, reused from its start.
//
// The first block is allocated on the first push: a handler that never
// receives anything costs nothing. buffer is not safe for concurrent use.
type buffer[T any] struct {
	head, tail *block[T]
	headPos    int // next item to pop, in head
	tailPos    int // next free slot, in tail
	n          int
	spare      *block[T] // emptied block kept for reuse
	blockSize  int
}

type block[T any] struct {
	items []T
	next  *block[T]
}

func newBuffer[T any](blockSize int) buffer[T] {
	return buffer[T]{blockSize: max(blockSize, 1)}
}

func (b *buffer[T]) len() int { return b.n }

func (b *buffer[T]) push(v T) {
	switch {
	case b.tail == nil:
		b.head = b.newBlock()
		b.tail = b.head
	case b.tailPos == b.blockSize:
		blk := b.newBlock()
		b.tail.next = blk
		b.tail, b.tailPos = blk, 0
	}
	b.tail.items[b.tailPos] = v
	b.tailPos++
	b.n++
}

// pop removes and returns the oldest item; ok is false when b is empty.
func (b *buffer[T]) pop() (v T, ok bool) {
	if b.n == 0 {
		return v, false
	}
	var zero T
	v = b.head.items[b.headPos]
	b.head.items[b.headPos] = zero // let the object be collected once handled
	b.headPos++
	b.n--
	switch {
	case b.n == 0: // head == tail: start the block over, drop the spare
		b.headPos, b.tailPos, b.spare = 0, 0, nil
	case b.headPos == b.blockSize:
		done := b.head
		b.head, b.headPos = done.next, 0
		done.next = nil
		b.spare = done
	}
	return v, true
}

// reset drops every item and releases all memory.
func (b *buffer[T]) reset() { *b = buffer[T]{blockSize: b.blockSize} }

func (b *buffer[T]) newBlock() *block[T] {
	if blk := b.spare; blk != nil {
		b.spare = nil
		return blk
	}
	return &block[T]{items: make([]T, b.blockSize)}
}
