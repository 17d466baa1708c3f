package ratelimit

import "time"

// delayed is an item waiting until readyAt.
type delayed[T comparable] struct {
	item    T
	readyAt time.Time
	pos     int // position in heap.s, kept current by swap
}

// heap is a min-heap of delayed items by readyAt, with an index so an item
// is in it at most once and can be moved to an earlier time in O(log n).
// It is written for T rather than on container/heap to avoid boxing every
// push in an interface.
type heap[T comparable] struct {
	s     []*delayed[T]
	index map[T]*delayed[T]
}

func (h *heap[T]) len() int { return len(h.s) }

func (h *heap[T]) peek() *delayed[T] { return h.s[0] }

// schedule makes item ready at readyAt, or at its current time if that is
// earlier. It reports whether item is now the earliest.
func (h *heap[T]) schedule(item T, readyAt time.Time) (first bool) {
	if d, ok := h.index[item]; ok {
		if !readyAt.Before(d.readyAt) {
			return false
		}
		d.readyAt = readyAt
		h.up(d.pos)
		return d.pos == 0
	}
	d := &delayed[T]{item: item, readyAt: readyAt, pos: len(h.s)}
	h.s = append(h.s, d)
	h.index[item] = d
	h.up(d.pos)
	return d.pos == 0
}

func (h *heap[T]) pop() T {
	d := h.s[0]
	last := len(h.s) - 1
	h.swap(0, last)
	h.s[last] = nil
	h.s = h.s[:last]
	if cap(h.s) > 1024 && len(h.s) < cap(h.s)/4 {
		h.s = append(make([]*delayed[T], 0, cap(h.s)/2), h.s...) // give back a burst's memory
	}
	h.down(0)
	delete(h.index, d.item)
	return d.item
}

func (h *heap[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.s[i].readyAt.Before(h.s[parent].readyAt) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *heap[T]) down(i int) {
	for {
		least := i
		for _, c := range [2]int{2*i + 1, 2*i + 2} {
			if c < len(h.s) && h.s[c].readyAt.Before(h.s[least].readyAt) {
				least = c
			}
		}
		if least == i {
			return
		}
		h.swap(i, least)
		i = least
	}
}

func (h *heap[T]) swap(i, j int) {
	h.s[i], h.s[j] = h.s[j], h.s[i]
	h.s[i].pos, h.s[j].pos = i, j
}
