package reflector

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batchSink is a recordSink that also records Hold and Release.
type batchSink struct{ recordSink }

func (s *batchSink) Hold()    { _ = s.add("hold") }
func (s *batchSink) Release() { _ = s.add("release") }

// readsWatcher returns its events in reads, calling the BeforeRead hook
// before each, as *httpwatch's watcher does, then ends with io.EOF.
type readsWatcher struct {
	reads      [][]watchStep
	beforeRead func()
	stopped    chan struct{}
}

func (w *readsWatcher) BeforeRead(f func()) { w.beforeRead = f }

func (w *readsWatcher) Next() (httpwatch.Event, error) {
	for len(w.reads) > 0 && len(w.reads[0]) == 0 {
		w.reads = w.reads[1:]
		w.beforeRead()
	}
	if len(w.reads) == 0 {
		w.beforeRead()
		return httpwatch.Event{}, io.EOF
	}
	s := w.reads[0][0]
	w.reads[0] = w.reads[0][1:]
	return s.ev, s.err
}

func (w *readsWatcher) Stop() {}

// The events of one read of the stream reach a BatchSink as one batch:
// held before the first, released before the watch reads again and when
// the watch ends, so the sink's consumer never waits for an event the
// reflector has delivered.
func TestReflectorHandsEventsOverPerRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resync time.Duration
	}{
		{name: "direct"},
		{name: "read ahead", resync: time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &readsWatcher{reads: [][]watchStep{
				{}, // the first read
				{ev(httpwatch.Added, obj("a", "2")), ev(httpwatch.Added, obj("b", "3"))},
				{ev(httpwatch.Modified, obj("a", "4"))},
			}}
			src := &scriptSource{watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){
				func(httpwatch.ListOptions) (httpwatch.Watcher, error) { return w, nil },
			}}
			r, _, _ := newTestReflector(src)
			sink := &batchSink{}
			r.Sink = sink
			r.ResyncPeriod = tc.resync
			s := r.initialState()
			s, _ = r.step(context.Background(), s.to(phaseWatch))
			require.Equal(t, phaseStream, s.phase)
			for range 4 {
				s, _ = r.step(context.Background(), s)
			}
			require.NotEqual(t, phaseStream, s.phase, "the watch has ended")
			got := sink.log()
			if tc.resync == 0 {
				assert.Equal(t, []string{"hold", "add a@2", "add b@3", "release", "hold", "update a@4", "release"}, got)
				return
			}
			// The reader and the loop race, so batches may be smaller
			// than reads; but every event is inside a hold, and the
			// sink is released at the end.
			var events []string
			held := false
			for _, c := range got {
				switch c {
				case "hold":
					assert.False(t, held, "hold twice")
					held = true
				case "release":
					assert.True(t, held, "release without hold")
					held = false
				default:
					assert.True(t, held, "%s outside a hold", c)
					events = append(events, c)
				}
			}
			assert.False(t, held, "the sink is left held")
			assert.Equal(t, []string{"add a@2", "add b@3", "update a@4"}, events)
		})
	}
}
