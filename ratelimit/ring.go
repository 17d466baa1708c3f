package ratelimit

// ring is a FIFO on a circular buffer whose size is a power of two, so a
// steady stream of push and pop allocates nothing.
type ring[T any] struct {
	buf  []T
	head int
	n    int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(x T) {
	if r.n == len(r.buf) {
		r.resize(max(16, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = x
	r.n++
}

func (r *ring[T]) pop() T {
	var zero T
	x := r.buf[r.head]
	r.buf[r.head] = zero // let the item be collected
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	// Give back memory after a burst, with slack so that a queue hovering
	// around one size does not resize on every few operations.
	if len(r.buf) > 64 && r.n < len(r.buf)/4 {
		r.resize(len(r.buf) / 2)
	}
	return x
}

func (r *ring[T]) resize(size int) {
	buf := make([]T, size)
	for i := range r.n {
		buf[i] = r.buf[(r.head+i)&(len(r.buf)-1)]
	}
	r.buf, r.head = buf, 0
}
