package apiserve_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"

	"github.com/listwatch/listwatch/apiserve"
	"github.com/listwatch/listwatch/clock"
)

// rvs lists the versions of evs.
func rvs(evs []apiserve.Event[int]) []int64 {
	out := make([]int64, 0, len(evs))
	for _, ev := range evs {
		out = append(out, ev.RV)
	}
	return out
}

// since is every event l holds after rv, failing the test if it cannot
// replay from there.
func since(t *testing.T, l *apiserve.Log[int], rv int64) []int64 {
	t.Helper()
	evs, err := l.Since(nil, rv, l.Epoch(), 1<<20)
	require.NoError(t, err)
	return rvs(evs)
}

// Decision 44: a zero Fresh means 75 s: a history whose events are all
// younger grows past Min instead of dropping its oldest.
func TestLogZeroFreshIsTheDefault(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	l := apiserve.Log[int]{Min: 4, Max: 16, Clock: clk}
	l.Reset(0)
	for rv := range int64(8) {
		l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv + 1})
		clk.Step(apiserve.DefaultFresh / 10)
	}
	require.Equal(t, 8, l.Len(), "grown, not dropping")
	require.Equal(t, int64(0), l.Floor())
}

// Decision 44: the Floor is the last Reset's version until an event is
// dropped, however far apart the versions are; growing drops nothing.
func TestLogFloorMovesOnlyOnADrop(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	l := apiserve.Log[int]{Min: 2, Max: 4, Fresh: time.Minute, Clock: clk}
	l.Reset(5)
	for _, rv := range []int64{10, 20, 30, 40} { // grows 2, 4
		l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv})
	}
	require.Equal(t, int64(5), l.Floor())
	require.Equal(t, []int64{10, 20, 30, 40}, since(t, &l, 5))
	l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: 50}) // full at Max: drops 10
	require.Equal(t, int64(19), l.Floor())
	require.Equal(t, []int64{20, 30, 40, 50}, since(t, &l, 19))
}

// Decision 44: halving keeps the newest events, in order, whatever the
// capacity (an odd Max halves to a ring of another parity).
func TestLogHalvingKeepsTheNewest(t *testing.T) {
	for _, max := range []int{13, 16} {
		clk := clock.NewFake(time.Unix(0, 0))
		l := apiserve.Log[int]{Min: 4, Max: max, Fresh: 10 * time.Second, Clock: clk}
		l.Reset(0)
		rv := int64(0)
		for range max + 3 { // grows to Max, then drops 3
			rv++
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv})
		}
		clk.Step(11 * time.Second)
		rv++
		l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv}) // all old: halves
		keep := max / 2
		var want []int64
		for v := rv - int64(keep) + 1; v <= rv; v++ {
			want = append(want, v)
		}
		require.Equal(t, keep, l.Len(), "Max %d", max)
		require.Equal(t, want, since(t, &l, l.Floor()), "Max %d", max)
	}
}

// Decision 44: the history doubles only while its oldest event is
// younger than Fresh, and halves only once its newest quarter is older:
// an event exactly Fresh old does neither, and the oldest is dropped.
func TestLogFreshIsABound(t *testing.T) {
	for _, tc := range []struct {
		name     string
		steps    []time.Duration // the clock's step before each of 8 appends after the first
		wantLen  int
		wantLast []int64
	}{
		// 4 appended at 0 s, the 5th exactly 10 s after the oldest:
		// not younger, so no doubling: the oldest goes.
		{"oldest exactly Fresh old", []time.Duration{0, 0, 0, 10 * time.Second}, 4, []int64{2, 3, 4, 5}},
		// just younger: doubles to 8.
		{"oldest just younger", []time.Duration{0, 0, 0, 10*time.Second - 1}, 5, []int64{1, 2, 3, 4, 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			l := apiserve.Log[int]{Min: 4, Max: 16, Fresh: 10 * time.Second, Clock: clk}
			l.Reset(0)
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: 1})
			for i, d := range tc.steps {
				clk.Step(d)
				l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: int64(i + 2)})
			}
			require.Equal(t, tc.wantLen, l.Len())
			require.Equal(t, tc.wantLast, since(t, &l, l.Floor()))
		})
	}
}

// Decision 44: a full history of 8 halves once its newest quarter (the
// 2 newest) is older than Fresh; while the older of those 2 is exactly
// Fresh old, or younger, it keeps 8 and drops its oldest.
func TestLogHalvesOnTheNewestQuarter(t *testing.T) {
	for _, tc := range []struct {
		name    string
		age     time.Duration // of the 7th event when the 9th comes
		wantLen int
	}{
		{"its oldest older than Fresh", 10*time.Second + 1, 4},
		{"its oldest exactly Fresh old", 10 * time.Second, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(0, 0))
			l := apiserve.Log[int]{Min: 4, Max: 8, Fresh: 10 * time.Second, Clock: clk}
			l.Reset(0)
			for rv := int64(1); rv <= 6; rv++ { // grows 4, 8
				l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv})
			}
			clk.Step(time.Hour) // the 6 oldest are long old
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: 7})
			clk.Step(time.Second)
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: 8}) // full
			clk.Step(tc.age - time.Second)
			l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: 9})
			require.Equal(t, tc.wantLen, l.Len())
			last := since(t, &l, l.Floor())
			require.Equal(t, int64(9), last[len(last)-1])
		})
	}
}

// Decision 44: Since gives at most max events; Back walks the events
// newer than a version, newest first, until told to stop; Epoch counts
// the Resets.
func TestLogSinceBackEpoch(t *testing.T) {
	l := apiserve.Log[int]{Clock: clock.NewFake(time.Unix(0, 0))}
	require.Equal(t, uint64(0), l.Epoch())
	l.Reset(0)
	for rv := int64(1); rv <= 5; rv++ {
		l.Append(apiserve.Event[int]{Type: apiserve.Added, RV: rv})
	}
	evs, err := l.Since(nil, 1, l.Epoch(), 2)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, rvs(evs))
	evs, err = l.Since(nil, 1, l.Epoch(), 0)
	require.NoError(t, err)
	require.Empty(t, evs)

	var back []int64
	l.Back(2, func(ev apiserve.Event[int]) bool { back = append(back, ev.RV); return true })
	require.Equal(t, []int64{5, 4, 3}, back)
	back = nil
	l.Back(0, func(ev apiserve.Event[int]) bool { back = append(back, ev.RV); return true })
	require.Equal(t, []int64{5, 4, 3, 2, 1}, back, "to the oldest")
	back = nil
	l.Back(0, func(ev apiserve.Event[int]) bool { back = append(back, ev.RV); return ev.RV > 4 })
	require.Equal(t, []int64{5, 4}, back, "stops when f says so")
	back = nil
	l.Back(5, func(ev apiserve.Event[int]) bool { back = append(back, ev.RV); return true })
	require.Empty(t, back)

	l.Reset(5)
	l.Reset(5)
	require.Equal(t, uint64(3), l.Epoch())
	_, err = l.Since(nil, 5, 2, 10)
	require.EqualError(t, err, "too old resource version: 5 (5)", "an earlier epoch")
}

// writes records how many events each Write of a watch response carries.
type writes struct {
	h      http.Header
	events []int
	all    []byte
}

func (w *writes) Header() http.Header { return w.h }
func (w *writes) WriteHeader(int)     {}
func (w *writes) Flush()              {}
func (w *writes) Write(b []byte) (int, error) {
	w.events = append(w.events, bytes.Count(b, []byte("\n")))
	w.all = append(w.all, b...)
	return len(b), nil
}

// Decision 44: the state a watch replays first is written 256 events at
// a time, so that a large list is never held whole in the response's
// buffer.
func TestServeWatchWritesInitialEventsInBatches(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	for i := range 600 {
		h.set(fmt.Sprintf("o%03d", i), "x")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the watch ends once it has written what it replays
	w := &writes{h: http.Header{}}
	apiserve.ServeWatch(ctx, w, sel{h, ""}, apiserve.WatchQuery{}, apiserve.WatchStream{Clock: h.clk})
	require.Equal(t, []int{256, 256, 88}, w.events)
}

// Decision 44: a watch far behind gets every event after its version,
// in order, however many batches that takes, before it follows live.
func TestServeWatchCatchesUpOverManyBatches(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	for range 600 {
		h.set("a", "x") // 11..610
	}
	lines := open(t, h, "", apiserve.WatchQuery{ResourceVersion: "10", StartRV: 10})
	got := next(t, lines, 600)
	want := []string{"ADDED a 11"}
	for rv := 12; rv <= 610; rv++ {
		want = append(want, fmt.Sprintf("MODIFIED a %d", rv))
	}
	require.Equal(t, want, got)
	h.set("a", "x")
	require.Equal(t, []string{"MODIFIED a 611"}, next(t, lines, 1))
}

// Decision 44: WithVersion splices the version into an object that has
// one, and leaves one without it as it is.
func TestWithVersion(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"metadata":{"name":"a","resourceVersion":"1"}}`, `{"metadata":{"name":"a","resourceVersion":"9"}}`},
		{`{"metadata":{"resourceVersion":"123456","name":"a"}}`, `{"metadata":{"resourceVersion":"9","name":"a"}}`},
		{`{"metadata":{"name":"a"}}`, `{"metadata":{"name":"a"}}`},
	} {
		require.Equal(t, tc.want, string(apiserve.WithVersion([]byte(tc.in), 9)), tc.in)
	}
}

// Decision 44: a watch asked as a Table sends each object as a one-row
// Table whose metadata carries the object's version, the column
// definitions in the first event only.
func TestServeWatchAsTable(t *testing.T) {
	h := newHist(clock.NewFake(time.Unix(0, 0)), 10)
	h.set("a", "x") // 11
	h.set("b", "x") // 12
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := &writes{h: http.Header{}}
	table := &apiserve.TableOutput{Printer: apiserve.PrinterFor("", "configmaps"), Request: apiserve.TableRequest{Now: time.Unix(0, 0)}}
	apiserve.ServeWatch(ctx, w, sel{h, ""}, apiserve.WatchQuery{}, apiserve.WatchStream{Clock: h.clk, Table: table,
		Layout: apiserve.Layout{Kind: "ConfigMap", APIVersion: "v1"}})
	var got []string
	for _, l := range bytes.Split(bytes.TrimSpace(w.all), []byte("\n")) {
		o := gjson.GetBytes(l, "object")
		got = append(got, fmt.Sprintf("%s %s rv=%s row=%s columns=%v", gjson.GetBytes(l, "type"), o.Get("kind"),
			o.Get("metadata.resourceVersion"), o.Get("rows.0.cells.0"), o.Get("columnDefinitions.#").Int() > 0))
	}
	require.Equal(t, []string{"ADDED Table rv=11 row=a columns=true", "ADDED Table rv=12 row=b columns=false"}, got)
}
