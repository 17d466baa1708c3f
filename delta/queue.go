package delta

// keyQueue is a FIFO of keys that reuses its array: popping advances a head
// index instead of reslicing, so a queue hovering around empty does not
// allocate on every push.
type keyQueue struct {
	keys []string
	head int
}

// bigQueue is the capacity above which an emptied queue drops its array, so
// the burst of a large relist is not kept for good.
const bigQueue = 1024

func (q *keyQueue) len() int { return len(q.keys) - q.head }

func (q *keyQueue) push(key string) { q.keys = append(q.keys, key) }

// pop removes the first key; the queue must not be empty.
func (q *keyQueue) pop() string {
	key := q.keys[q.head]
	q.keys[q.head] = ""
	q.head++
	switch {
	case q.head == len(q.keys):
		q.head = 0
		if cap(q.keys) > bigQueue {
			q.keys = nil
		} else {
			q.keys = q.keys[:0]
		}
	case q.head >= bigQueue && 2*q.head >= len(q.keys):
		// Slide the live half down; the copy is paid for by the pops
		// that emptied the first half.
		n := copy(q.keys, q.keys[q.head:])
		clear(q.keys[n:])
		q.keys = q.keys[:n]
		q.head = 0
	}
	return key
}

func (q *keyQueue) list() []string {
	out := make([]string, q.len())
	copy(out, q.keys[q.head:])
	return out
}
