package events_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const wait = 10 * time.Second

type fixture struct {
	t   *testing.T
	s   *watchtest.Server
	clk *clock.Fake
	rec *events.Recorder
}

// newFixture runs a recorder on a fake clock against watchtest until the
// test ends.
func newFixture(t *testing.T, tune func(*events.Recorder)) *fixture {
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	s.AddResource(watchtest.Events, watchtest.Definition{})
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	clk := clock.NewFake(time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC))
	rec := events.New(client.Resource(events.Resource), "example.com/labeller", "pod-1")
	rec.Clock = clk
	if tune != nil {
		tune(rec)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{t: t, s: s, clk: clk, rec: rec}
}

func (f *fixture) object(name string) *raw.Object {
	o, err := raw.NewObject([]byte(fmt.Sprintf(
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":"ns","uid":"uid-%s","resourceVersion":"7"}}`, name, name)))
	require.NoError(f.t, err)
	return o
}

// events returns the Events on the server about name.
func (f *fixture) events(name string) []*raw.Object {
	var out []*raw.Object
	for _, o := range f.s.List(watchtest.Events, "ns") {
		if o.Get("regarding.name").String() == name {
			out = append(out, o)
		}
	}
	return out
}

// processed returns once the recorder has handled everything recorded
// before: it records an event about a marker object and waits for it.
func (f *fixture) processed(marker string) {
	f.t.Helper()
	f.rec.Event(f.object(marker), events.Normal, "Marker", "Mark", "")
	require.Eventually(f.t, func() bool { return len(f.events(marker)) == 1 }, wait, time.Millisecond, "marker %s written", marker)
}

// step moves the clock and returns once the recorder waits on its flush
// timer again, so the flush has been written.
func (f *fixture) step(d time.Duration) {
	f.t.Helper()
	f.clk.Step(d)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(f.t, f.clk.WaitForWaiters(ctx, 1))
}

// Repeats of one event are one Event: created at the first, its series
// written at the second (count 2), then at each flush while it grows; a
// repeat after the series ended starts a new Event.
// Decision 31.
func TestSeriesAggregated(t *testing.T) {
	f := newFixture(t, nil)
	cm := f.object("cm")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", `set "checked"=true, é`)
	require.Eventually(t, func() bool { return len(f.events("cm")) == 1 }, wait, time.Millisecond)
	ev := f.events("cm")[0]
	assert.Equal(t, "events.k8s.io/v1", ev.APIVersion())
	assert.Equal(t, "ns", ev.Namespace())
	for path, want := range map[string]string{
		"reason": "Labelled", "action": "Label", "type": "Normal", "note": `set "checked"=true, é`,
		"reportingController": "example.com/labeller", "reportingInstance": "pod-1",
		"eventTime": "2026-01-02T03:04:05.600000Z", "regarding.kind": "ConfigMap", "regarding.uid": "uid-cm",
		"regarding.apiVersion": "v1", "regarding.namespace": "ns", "regarding.resourceVersion": "7",
	} {
		assert.Equal(t, want, ev.Get(path).String(), path)
	}
	assert.False(t, ev.Get("series").Exists())

	f.clk.Step(time.Second)
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "another note, same event")
	require.Eventually(t, func() bool { return f.events("cm")[0].Get("series.count").Int() == 2 }, wait, time.Millisecond)
	ev = f.events("cm")[0]
	assert.Equal(t, "2026-01-02T03:04:06.600000Z", ev.Get("series.lastObservedTime").String())
	assert.Equal(t, `set "checked"=true, é`, ev.Get("note").String(), "the first note is kept")

	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m1")
	assert.EqualValues(t, 2, f.events("cm")[0].Get("series.count").Int(), "later repeats wait for the flush")
	f.step(events.DefaultSeriesFlush)
	assert.EqualValues(t, 4, f.events("cm")[0].Get("series.count").Int())

	f.rec.Event(cm, events.Warning, "Labelled", "Label", "")
	f.processed("m2")
	require.Len(t, f.events("cm"), 2, "another type is another event")

	f.step(events.DefaultSeriesExpiry)
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m3")
	assert.Len(t, f.events("cm"), 3, "a repeat after the series ended is a new Event")
	assert.Zero(t, f.rec.Dropped())
}

// Each object's events are held to Burst at once and one per Refill;
// others' are not affected; the excess is dropped and counted.
// Decision 31.
func TestRateLimitPerObject(t *testing.T) {
	f := newFixture(t, func(r *events.Recorder) { r.Burst, r.Refill = 3, time.Minute })
	cm := f.object("cm")
	for i := range 5 {
		f.rec.Event(cm, events.Normal, fmt.Sprintf("Reason%d", i), "Act", "")
	}
	f.processed("other")
	assert.Len(t, f.events("cm"), 3)
	assert.EqualValues(t, 2, f.rec.Dropped())

	f.step(time.Minute)
	f.rec.Event(cm, events.Normal, "Reason5", "Act", "")
	f.rec.Event(cm, events.Normal, "Reason6", "Act", "")
	f.processed("other2")
	assert.Len(t, f.events("cm"), 4, "one more after a Refill")
	assert.EqualValues(t, 3, f.rec.Dropped())
}

// With the server hanging, recording never blocks: the buffer fills and
// the rest is dropped, not queued.
// Decision 31.
func TestServerDownDropsWithoutBlocking(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer hang.Close()
	defer close(release)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: hang.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	rec := events.New(client.Resource(events.Resource), "example.com/labeller", "pod-1")
	rec.Buffer = 5
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	defer func() { cancel(); <-done }()

	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		for i := range 1000 {
			o, _ := raw.NewObject([]byte(fmt.Sprintf(`{"metadata":{"name":"o%d","namespace":"ns","uid":"u%d"}}`, i, i)))
			rec.Event(o, events.Warning, "Failed", "Check", "")
		}
	}()
	select {
	case <-recorded:
	case <-time.After(wait):
		t.Fatal("Event blocked while the server hangs")
	}
	assert.GreaterOrEqual(t, rec.Dropped(), uint64(1000-5-1), "at most the buffer and the write in flight are kept")
}
