package events_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/watchtest"
)

// count returns the series count of the one Event about name (1 without a
// series).
func (f *fixture) count(name string) int64 {
	f.t.Helper()
	evs := f.events(name)
	require.Len(f.t, evs, 1, "one Event about %s", name)
	if c := evs[0].Get("series.count"); c.Exists() {
		return c.Int()
	}
	return 1
}

// A Recorder whose series fields are zero, as a literal leaves them, takes
// the defaults: a series is flushed every 30 s and lasts 6 minutes. Its
// own Logger is kept and hears a refused write (at Error: a 403).
// Decision 31.
func TestRecorderZeroFieldsTakeDefaults(t *testing.T) {
	log := &testlog.Log{}
	f := newFixture(t, func(r *events.Recorder) {
		r.SeriesFlush, r.SeriesExpiry = 0, 0
		r.Logger = slog.New(log)
	})
	cm := f.object("cm")
	for range 3 {
		f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	}
	f.processed("m1")
	assert.EqualValues(t, 2, f.count("cm"), "the third waits for the flush")
	f.clk.Step(events.DefaultSeriesFlush - time.Second)
	f.processed("m2")
	assert.EqualValues(t, 2, f.count("cm"), "no flush before 30 s")
	f.step(time.Second)
	assert.EqualValues(t, 3, f.count("cm"), "flushed at 30 s")

	f.step(events.DefaultSeriesExpiry - time.Minute) // 5.5 minutes after the last
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m3")
	f.step(events.DefaultSeriesFlush)
	assert.EqualValues(t, 4, f.count("cm"), "still the same series within 6 minutes")

	f.s.FailNext(watchtest.Failure{Code: http.StatusForbidden, Verbs: []string{"create"}})
	f.rec.Event(f.object("refused"), events.Normal, "Labelled", "Label", "")
	f.processed("m4")
	assert.EqualValues(t, 1, f.rec.Dropped())
	above := log.Above()
	require.NotEmpty(t, above)
	assert.True(t, strings.HasPrefix(above[0], "ERROR events: event not recorded; events are dropped while this lasts namespace=ns err=events: create ns/refused."), above[0])
}

// Objects without a uid are rate limited by namespace and name, each on
// its own. Decision 31.
func TestRateLimitWithoutUID(t *testing.T) {
	f := newFixture(t, func(r *events.Recorder) { r.Burst, r.Refill = 1, time.Hour })
	for _, name := range []string{"a", "b", "a"} {
		o, err := raw.NewObject([]byte(`{"kind":"ConfigMap","metadata":{"name":"` + name + `","namespace":"ns"}}`))
		require.NoError(t, err)
		f.rec.Event(o, events.Normal, "Reason"+name, "Act", "")
	}
	f.processed("m")
	assert.Len(t, f.events("a"), 1)
	assert.Len(t, f.events("b"), 1, "b has a bucket of its own")
	assert.EqualValues(t, 1, f.rec.Dropped(), "a's second is over its burst")
}

// A note longer than the server takes (1024 bytes) is cut at a character's
// start, the first 1024 bytes at most; one of exactly 1024 bytes is kept
// whole. Decision 31.
func TestNoteTruncated(t *testing.T) {
	f := newFixture(t, nil)
	exact := strings.Repeat("n", 1024)
	long := "a" + strings.Repeat("é", 600) // é starts at odd offsets: 1024 is inside one
	f.rec.Event(f.object("exact"), events.Normal, "R", "A", exact)
	f.rec.Event(f.object("long"), events.Normal, "R", "A", long)
	f.processed("m")
	assert.Equal(t, exact, f.events("exact")[0].Get("note").String())
	got := f.events("long")[0].Get("note").String()
	assert.Len(t, got, 1023)
	assert.True(t, utf8.ValidString(got))
	assert.True(t, strings.HasPrefix(long, got))

	// No character starts in the first 1024 bytes: nothing is left of it.
	f.rec.Event(f.object("garbage"), events.Normal, "R", "A", strings.Repeat("\x80", 1100))
	f.processed("m2")
	assert.Empty(t, f.events("garbage")[0].Get("note").String())
}

// An Event deleted on the server before its second occurrence is created
// again with the series at count 2. Decision 31.
func TestSecondOccurrenceOfDeletedEventHasItsSeries(t *testing.T) {
	f := newFixture(t, nil)
	cm := f.object("cm")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m1")
	_, err := f.s.Delete(watchtest.Events, "ns", f.events("cm")[0].Name())
	require.NoError(t, err)
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m2")
	assert.EqualValues(t, 2, f.count("cm"))
}

// A flush keeps a series that is still live: a repeat after it counts in
// the same Event. Decision 31.
func TestFlushKeepsLiveSeries(t *testing.T) {
	f := newFixture(t, nil)
	cm := f.object("cm")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m1")
	f.step(events.DefaultSeriesFlush)
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m2")
	f.step(events.DefaultSeriesFlush)
	assert.EqualValues(t, 3, f.count("cm"))
}

// A series whose write the server refuses (not with 404) is reported and
// forgotten: the next repeat starts a new Event. Decision 31.
func TestRefusedSeriesWriteIsForgotten(t *testing.T) {
	var errs atomic.Int32
	f := newFixture(t, func(r *events.Recorder) { r.OnError = func(error) { errs.Add(1) } })
	cm := f.object("cm")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m1")
	f.s.FailNext(watchtest.Failure{Code: http.StatusForbidden, Verbs: []string{"patch"}})
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m2")
	assert.EqualValues(t, 1, errs.Load())
	assert.EqualValues(t, 1, f.rec.Dropped())
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m3")
	assert.Len(t, f.events("cm"), 2, "a new Event after the refused series")
}
