package processor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func drain(r *ring[int]) []int {
	var out []int
	for {
		v, ok := r.pop()
		if !ok {
			return out
		}
		out = append(out, v)
	}
}

func TestRingAllocatesOnFirstPush(t *testing.T) {
	r := newRing[int](4)
	require.Empty(t, r.buf)
	_, ok := r.pop()
	require.False(t, ok)
	r.push(1)
	require.Len(t, r.buf, 4)
}

func TestRingWrapsAround(t *testing.T) {
	r := newRing[int](4)
	for i := range 3 {
		r.push(i)
	}
	require.Equal(t, []int{0, 1}, []int{must(r.pop()), must(r.pop())})
	// head is at 2; these three wrap past the end of the slice.
	for i := 3; i < 6; i++ {
		r.push(i)
	}
	require.Len(t, r.buf, 4, "four items fit without growing")
	require.Equal(t, 2, r.head)
	require.Equal(t, []int{2, 3, 4, 5}, drain(&r))
}

func TestRingGrowsKeepingOrderAcrossTheWrap(t *testing.T) {
	r := newRing[int](4)
	for i := range 3 {
		r.push(i)
	}
	must(r.pop())
	must(r.pop())
	for i := 3; i < 20; i++ { // wraps, then grows twice from a wrapped state
		r.push(i)
	}
	require.Equal(t, 18, r.len())
	require.Len(t, r.buf, 32)
	want := make([]int, 0, 18)
	for i := 2; i < 20; i++ {
		want = append(want, i)
	}
	require.Equal(t, want, drain(&r))
}

func TestRingShrinksBackToFloorWhenDrained(t *testing.T) {
	r := newRing[int](4)
	for i := range 64 {
		r.push(i)
	}
	require.Len(t, r.buf, 64)
	sizes := map[int]bool{}
	for i := range 64 {
		require.Equal(t, i, must(r.pop()))
		sizes[len(r.buf)] = true
		require.LessOrEqual(t, r.len(), len(r.buf))
		if len(r.buf) > 4 {
			require.Greater(t, r.len(), len(r.buf)/4-1, "a buffer more than three quarters empty must shrink")
		}
	}
	require.Equal(t, map[int]bool{64: true, 32: true, 16: true, 8: true, 4: true}, sizes)
	require.Len(t, r.buf, 4, "never below the floor")
}

func TestRingHoversWithoutReallocating(t *testing.T) {
	r := newRing[int](4)
	for i := range 9 {
		r.push(i)
	}
	require.Len(t, r.buf, 16)
	buf := &r.buf[0]
	for i := range 1000 { // one in, one out around 9 items: between the thresholds
		r.push(i)
		must(r.pop())
	}
	require.Same(t, buf, &r.buf[0])
}

func TestRingReleasesPoppedItems(t *testing.T) {
	r := newRing[*int](4)
	x := 7
	r.push(&x)
	r.push(&x)
	p, _ := r.pop()
	require.Same(t, &x, p)
	require.Nil(t, r.buf[0], "a popped slot must not keep its object alive")
}

func TestRingReset(t *testing.T) {
	r := newRing[int](4)
	for i := range 100 {
		r.push(i)
	}
	r.reset()
	require.Zero(t, r.len())
	require.Nil(t, r.buf)
	r.push(1)
	require.Equal(t, []int{1}, drain(&r))
}

func must(v int, ok bool) int {
	if !ok {
		panic("pop from empty ring")
	}
	return v
}
