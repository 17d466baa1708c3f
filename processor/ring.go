package processor

// ring is an unbounded FIFO of notifications stored in a circular slice.
//
// It doubles when full and halves when a quarter full, never below floor, so a
// burst costs memory only while it is being drained: a handler that fell
// behind by a million events does not keep a million slots once it catches
// up. The gap between the grow and shrink thresholds keeps a queue hovering
// around one size from reallocating on every push and pop.
//
// The backing slice is allocated on the first push, so a listener that never
// receives anything costs nothing. ring is not safe for concurrent use.
type ring[T any] struct {
	buf   []T
	head  int // index of the oldest element
	n     int // number of elements
	floor int // capacity never drops below this once allocated
}

func newRing[T any](floor int) ring[T] {
	return ring[T]{floor: max(floor, 1)}
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.resize(max(r.floor, 2*len(r.buf)))
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
}

// pop removes and returns the oldest element; ok is false when r is empty.
func (r *ring[T]) pop() (v T, ok bool) {
	if r.n == 0 {
		return v, false
	}
	var zero T
	v = r.buf[r.head]
	r.buf[r.head] = zero // let the handler's object be collected once handled
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	if len(r.buf) > r.floor && r.n <= len(r.buf)/4 {
		r.resize(max(r.floor, len(r.buf)/2))
	}
	return v, true
}

// reset drops every element and releases the backing slice.
func (r *ring[T]) reset() { *r = ring[T]{floor: r.floor} }

func (r *ring[T]) resize(size int) {
	buf := make([]T, size)
	if r.n > 0 {
		k := copy(buf, r.buf[r.head:min(r.head+r.n, len(r.buf))])
		copy(buf[k:], r.buf[:r.n-k])
	}
	r.buf, r.head = buf, 0
}
