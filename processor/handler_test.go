package processor_test

import (
	"testing"

	"github.com/listwatch/listwatch/processor"
	"github.com/stretchr/testify/require"
)

// conformance 74: a FilteringHandler turns updates that cross the filter's
// edge into adds and deletes, so its handler sees a consistent subset.
func TestFilteringHandler(t *testing.T) {
	even := func(n int) bool { return n%2 == 0 }
	for _, tc := range []struct {
		name   string
		filter func(int) bool
		call   func(h processor.Handler[int])
		want   []string
	}{
		{"update, both match", even, func(h processor.Handler[int]) { h.OnUpdate(2, 4) }, []string{"update 2 4"}},
		{"update, only new matches", even, func(h processor.Handler[int]) { h.OnUpdate(1, 4) }, []string{"add 4 false"}},
		{"update, only old matches", even, func(h processor.Handler[int]) { h.OnUpdate(2, 3) }, []string{"delete 2 false"}},
		{"update, neither matches", even, func(h processor.Handler[int]) { h.OnUpdate(1, 3) }, nil},
		{"add matches", even, func(h processor.Handler[int]) { h.OnAdd(2, true) }, []string{"add 2 true"}},
		{"add filtered out", even, func(h processor.Handler[int]) { h.OnAdd(1, true) }, nil},
		{"delete matches", even, func(h processor.Handler[int]) { h.OnDelete(2, true) }, []string{"delete 2 true"}},
		{"delete filtered out", even, func(h processor.Handler[int]) { h.OnDelete(1, false) }, nil},
		{"nil filter passes all", nil, func(h processor.Handler[int]) { h.OnUpdate(1, 3) }, []string{"update 1 3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder()
			tc.call(processor.FilteringHandler[int]{Filter: tc.filter, Handler: r})
			close(r)
			var got []string
			for s := range r {
				got = append(got, s)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestFilteringHandlerWithoutHandlerDoesNothing(t *testing.T) {
	h := processor.FilteringHandler[int]{Filter: func(int) bool { return true }}
	h.OnAdd(1, false)
	h.OnUpdate(1, 2)
	h.OnDelete(2, false)
}

func TestHandlerFuncsSkipsNilFuncs(t *testing.T) {
	var added []int
	h := processor.HandlerFuncs[int]{AddFunc: func(obj int, _ bool) { added = append(added, obj) }}
	h.OnAdd(1, false)
	h.OnUpdate(1, 2)
	h.OnDelete(2, true)
	require.Equal(t, []int{1}, added)
}

func TestNotificationConstructors(t *testing.T) {
	require.Equal(t, processor.Notification[int]{Kind: processor.KindAdd, New: 1, IsInInitialList: true}, processor.Added(1, true))
	require.Equal(t, processor.Notification[int]{Kind: processor.KindUpdate, Old: 1, New: 2, Resync: true}, processor.Updated(1, 2, true))
	require.Equal(t, processor.Notification[int]{Kind: processor.KindDelete, Old: 2, FinalStateUnknown: true}, processor.Deleted(2, true))
	require.Equal(t, "add", processor.KindAdd.String())
	require.Equal(t, "update", processor.KindUpdate.String())
	require.Equal(t, "delete", processor.KindDelete.String())
	require.Equal(t, "Kind(9)", processor.Kind(9).String())
}
