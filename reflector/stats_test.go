package reflector

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
)

// Stats tells why each watch ended, which kind each error was, and when
// the server last showed the cache current: what an operator's metrics
// read (the clean end of a watch reaches no OnError, so only Stats can
// count it).
func TestReflectorStatsCountWatchEndsByCause(t *testing.T) {
	for _, tc := range []struct {
		name   string
		step   watchStep
		events int // events the watch delivered before the step
		want   WatchEnds
		kind   string // of the error reported, "" for none
		synced bool   // the end shows the cache current
	}{
		{"server timeout", end(io.EOF), 1, WatchEnds{Timeout: 1}, "", true},
		{"410 event", errEv(errExpired), 1, WatchEnds{Gone: 1}, "routine", false},
		{"cut", end(fmt.Errorf("read: %w", io.ErrUnexpectedEOF)), 1, WatchEnds{Cut: 1}, "routine", false},
		{"silent watch", end(fmt.Errorf("read: %w", httpwatch.ErrWatchIdle)), 1, WatchEnds{Silent: 1}, "transient", false},
		{"connection lost", end(fmt.Errorf("read: %w", httpwatch.ErrConnectionLost)), 1, WatchEnds{Silent: 1}, "transient", false}, // decision 38: an outage begins
		{"error event", errEv(errInternal), 1, WatchEnds{Failed: 1}, "transient", false},
		{"forbidden event", errEv(&httpwatch.StatusError{Code: 403, Reason: "Forbidden"}), 1, WatchEnds{Failed: 1}, "permanent", false},
		{"very short watch", end(io.EOF), 0, WatchEnds{Failed: 1}, "transient", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _, c := newTestReflector(&scriptSource{})
			s := started(streamOf(newWatcher(tc.step), synced("5")))
			s.events = tc.events
			c.Step(10 * time.Second) // past a very short watch, unless no event came
			if tc.events == 0 {
				s.opened = c.Now()
			}
			next, _ := r.step(context.Background(), s)
			next.closeWatch()
			st := r.Stats()
			assert.Equal(t, tc.want, st.WatchEnds)
			kinds := map[string]int64{"permanent": st.PermanentErrors, "routine": st.RoutineErrors,
				"transient": st.Errors - st.PermanentErrors - st.RoutineErrors}
			for kind, n := range kinds {
				if kind == tc.kind {
					assert.EqualValues(t, 1, n, "%s errors", kind)
				} else {
					assert.Zero(t, n, "%s errors", kind)
				}
			}
			if tc.synced {
				assert.Equal(t, c.Now(), st.LastSync)
			} else {
				assert.True(t, st.LastSync.IsZero(), "LastSync %v", st.LastSync)
			}
		})
	}
}

// A list, and the first event of a watch, stamp LastSync; an event that
// kept a watch going does not read the clock again.
func TestReflectorStatsLastSync(t *testing.T) {
	w := newWatcher(ev(httpwatch.Added, obj("b", "11")), ev(httpwatch.Added, obj("c", "12")))
	src := &scriptSource{
		pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10"))},
		watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
	}
	r, _, c := newTestReflector(src)
	require.True(t, r.Stats().LastSync.IsZero())
	s, _ := r.step(context.Background(), at(phaseList, memory{}))
	listed := c.Now()
	assert.Equal(t, listed, r.Stats().LastSync, "the list")
	c.Step(time.Minute)
	s, _ = r.step(context.Background(), s) // opens the watch
	assert.Equal(t, listed, r.Stats().LastSync, "opening a watch shows nothing yet")
	s, _ = r.step(context.Background(), s)
	first := c.Now()
	assert.Equal(t, first, r.Stats().LastSync, "the first event")
	c.Step(time.Minute)
	s, _ = r.step(context.Background(), s)
	s.closeWatch()
	assert.Equal(t, first, r.Stats().LastSync, "later events")
	assert.EqualValues(t, 1, r.Stats().Lists)
}
