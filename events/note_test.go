package events_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/events"
)

// An Event keeps the note of its first occurrence, as client-go's does;
// with NotePerOccurrence every note is kept, each distinct one an Event
// of its own, and repeats of one note still make a series. Decision 31.
func TestNotePerOccurrence(t *testing.T) {
	record := func(f *fixture) {
		cm := f.object("cm")
		for _, n := range []int{2, 3, 3, 4} {
			f.rec.Event(cm, events.Normal, "Scaled", "Scale", fmt.Sprintf("replicas=%d", n))
			f.clk.Step(time.Second)
		}
		f.processed("m")
	}
	notes := func(f *fixture) map[string]int64 {
		out := map[string]int64{}
		for _, ev := range f.events("cm") {
			out[ev.Get("note").String()] = max(ev.Get("series.count").Int(), 1)
		}
		return out
	}

	f := newFixture(t, nil)
	record(f)
	f.step(events.DefaultSeriesFlush)
	assert.Equal(t, map[string]int64{"replicas=2": 4}, notes(f), "the first note, counted four times")

	f = newFixture(t, func(r *events.Recorder) { r.NotePerOccurrence = true })
	record(f)
	f.step(events.DefaultSeriesFlush)
	require.Len(t, f.events("cm"), 3)
	assert.Equal(t, map[string]int64{"replicas=2": 1, "replicas=3": 2, "replicas=4": 1}, notes(f))
}
