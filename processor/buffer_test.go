package processor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// blocks returns how many blocks b holds, spare included.
func (b *buffer[T]) blocks() int {
	k := 0
	for blk := b.head; blk != nil; blk = blk.next {
		k++
	}
	if b.spare != nil {
		k++
	}
	return k
}

func drain(b *buffer[int]) []int {
	var out []int
	for {
		v, ok := b.pop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

func TestBufferAllocatesOnFirstPush(t *testing.T) {
	b := newBuffer[int](4)
	require.Zero(t, b.blocks())
	_, ok := b.pop()
	require.False(t, ok)
	b.push(1)
	require.Equal(t, 1, b.blocks())
}

// The buffer's answer to a ring's wraparound: emptied, it starts its one
// block over instead of moving on, and a backlog crossing block boundaries
// reuses the block it just emptied.
func TestBufferReusesItsBlocks(t *testing.T) {
	b := newBuffer[int](4)
	for round := range 100 { // fill up to a block and drain it, again and again
		for i := range 4 {
			b.push(round*4 + i)
		}
		require.Equal(t, seq(round*4, round*4+4), drain(&b))
		require.Equal(t, 1, b.blocks())
	}
	first := b.head
	require.Same(t, first, b.tail)

	for i := range 6 { // a backlog of six that keeps crossing boundaries
		b.push(i)
	}
	for i := 6; i < 1000; i++ {
		b.push(i)
		require.Equal(t, i-6, must(b.pop()))
		require.LessOrEqual(t, b.blocks(), 3, "a steady backlog recycles blocks")
	}
	require.Equal(t, seq(994, 1000), drain(&b))
}

func TestBufferGrowsInOrder(t *testing.T) {
	b := newBuffer[int](4)
	b.push(0)
	b.push(1)
	must(b.pop()) // start mid-block
	for i := 2; i < 100; i++ {
		b.push(i)
	}
	require.Equal(t, 99, b.len())
	require.Equal(t, 25, b.blocks())
	require.Equal(t, seq(1, 100), drain(&b))
}

func TestBufferGivesMemoryBackAsItDrains(t *testing.T) {
	b := newBuffer[int](4)
	for i := range 64 {
		b.push(i)
	}
	require.Equal(t, 16, b.blocks())
	for i := range 64 {
		require.Equal(t, i, must(b.pop()))
		// The blocks still holding items, plus at most one spare.
		require.LessOrEqual(t, b.blocks(), (b.len()+3)/4+2)
	}
	require.Equal(t, 1, b.blocks(), "empty: one block, no spare")
}

func TestBufferReleasesPoppedItems(t *testing.T) {
	b := newBuffer[*int](4)
	x := 7
	b.push(&x)
	b.push(&x)
	p, _ := b.pop()
	require.Same(t, &x, p)
	require.Nil(t, b.head.items[0], "a popped slot must not keep its object alive")
}

func TestBufferReset(t *testing.T) {
	b := newBuffer[int](4)
	for i := range 100 {
		b.push(i)
	}
	b.reset()
	require.Zero(t, b.len())
	require.Zero(t, b.blocks())
	b.push(1)
	require.Equal(t, []int{1}, drain(&b))
}

func must(v int, ok bool) int {
	if !ok {
		panic("pop from empty buffer")
	}
	return v
}
