package ratelimit

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The heap against a plain map of earliest times, under random schedules.
func TestHeapMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	h := heap[int]{index: map[int]*delayed[int]{}}
	want := map[int]time.Time{}
	epoch := time.Unix(0, 0)
	for range 20000 {
		if r.IntN(3) > 0 || h.len() == 0 {
			item, at := r.IntN(500), epoch.Add(time.Duration(r.IntN(1000)))
			h.schedule(item, at)
			if old, ok := want[item]; !ok || at.Before(old) {
				want[item] = at
			}
		} else {
			first := h.peek().readyAt
			item := h.pop()
			require.Equal(t, want[item], first)
			for _, at := range want {
				if at.Before(first) {
					t.Fatalf("popped %v but %v was earlier", first, at)
				}
			}
			delete(want, item)
		}
		require.Equal(t, len(want), h.len())
		require.Equal(t, len(want), len(h.index))
	}
	for i, d := range h.s {
		require.Equal(t, i, d.pos)
	}
}

func TestHeapScheduleReportsFirst(t *testing.T) {
	h := heap[string]{index: map[string]*delayed[string]{}}
	epoch := time.Unix(0, 0)
	require.True(t, h.schedule("a", epoch.Add(5)))
	require.False(t, h.schedule("b", epoch.Add(7)))
	require.False(t, h.schedule("a", epoch.Add(9)), "later time for a waiting item is ignored")
	require.True(t, h.schedule("b", epoch.Add(1)), "earlier time moves b to the front")
	require.Equal(t, "b", h.pop())
	require.Equal(t, "a", h.pop())
}

// The ring against a slice, across growth and shrinking.
func TestRingIsFIFO(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var q ring[int]
	var want []int
	next := 0
	for range 100000 {
		// Phases of mostly pushes, then mostly pops, to grow and shrink.
		pushBias := 2
		if (next/5000)%2 == 1 {
			pushBias = 0
		}
		if r.IntN(3) < pushBias || len(want) == 0 {
			q.push(next)
			want = append(want, next)
			next++
		} else {
			require.Equal(t, want[0], q.pop())
			want = want[1:]
		}
		require.Equal(t, len(want), q.len())
	}
	for q.len() > 0 {
		require.Equal(t, want[0], q.pop())
		want = want[1:]
	}
	require.LessOrEqual(t, len(q.buf), 64, "memory given back after the burst")
}
