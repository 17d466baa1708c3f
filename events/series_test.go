package events_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/watchtest"
)

// OnError sees each write the server refused, as an error that errors.As
// finds the server's status in; the event is counted as dropped.
// Decision 31.
func TestOnErrorSeesRefusedWrites(t *testing.T) {
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "forbidden", http.StatusForbidden)
	}))
	defer refuse.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: refuse.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	rec := events.New(client.Resource(events.Resource), "example.com/labeller", "pod-1")
	errs := make(chan error, 1)
	rec.OnError = func(err error) { errs <- err }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	defer func() { cancel(); <-done }()

	o, err := raw.NewObject([]byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm","namespace":"ns","uid":"u"}}`))
	require.NoError(t, err)
	rec.Event(o, events.Warning, "Failed", "Check", "")
	select {
	case err := <-errs:
		var status *httpwatch.StatusError
		require.ErrorAs(t, err, &status)
		assert.Equal(t, http.StatusForbidden, status.Code)
		assert.Contains(t, err.Error(), "events: create ns/cm.")
	case <-time.After(wait):
		t.Fatal("OnError not called for a refused write")
	}
	assert.EqualValues(t, 1, rec.Dropped())
}

// An Event about a cluster-scoped object (a Node) is written in the
// default namespace: an Event has a namespace, and the regarding object
// gives none. Decision 31.
func TestClusterScopedObjectEventInDefault(t *testing.T) {
	var mu sync.Mutex
	var errs []error
	f := newFixture(t, func(r *events.Recorder) {
		r.OnError = func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	})
	node, err := raw.NewObject([]byte(`{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1","uid":"uid-node"}}`))
	require.NoError(t, err)
	f.rec.Event(node, events.Warning, "NotReady", "Check", "")
	f.processed("marker")
	var got []*raw.Object
	for _, o := range f.s.List(watchtest.Events, "default") {
		if o.Get("regarding.name").String() == "node-1" {
			got = append(got, o)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, got, 1, "the Node's Event is in default; errors: %v", errs)
	assert.False(t, got[0].Get("regarding.namespace").Exists(), "the regarding object has no namespace")
	assert.Empty(t, errs)
	assert.Zero(t, f.rec.Dropped())
}

// A series whose Event is gone from the server (Events expire there) is
// created again, with its count, when the next flush finds the patch
// answered 404. Decision 31.
func TestSeriesOfDeletedEventIsCreatedAgain(t *testing.T) {
	f := newFixture(t, nil)
	cm := f.object("cm")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "first")
	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	require.Eventually(t, func() bool {
		evs := f.events("cm")
		return len(evs) == 1 && evs[0].Get("series.count").Int() == 2
	}, wait, time.Millisecond)
	_, err := f.s.Delete(watchtest.Events, "ns", f.events("cm")[0].Name())
	require.NoError(t, err)

	f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
	f.processed("m1")
	require.Empty(t, f.events("cm"), "the third waits for the flush")
	f.step(events.DefaultSeriesFlush)
	evs := f.events("cm")
	require.Len(t, evs, 1, "the series is created again")
	assert.EqualValues(t, 3, evs[0].Get("series.count").Int())
	assert.Equal(t, "first", evs[0].Get("note").String())
	assert.Zero(t, f.rec.Dropped())
}

// A repeat that comes after its series expired, but before a flush has
// forgotten the series (SeriesFlush at least SeriesExpiry), starts a new
// Event rather than counting in the old one. Decision 31.
func TestRepeatAfterExpiryBeforeFlushIsANewEvent(t *testing.T) {
	for _, after := range []time.Duration{time.Minute, 2 * time.Minute} {
		t.Run(after.String(), func(t *testing.T) {
			f := newFixture(t, func(r *events.Recorder) { r.SeriesFlush, r.SeriesExpiry = 10*time.Minute, time.Minute })
			cm := f.object("cm")
			f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
			f.processed("m1")
			f.clk.Step(after) // expired (SeriesExpiry is 1m); the flush is minutes away
			f.rec.Event(cm, events.Normal, "Labelled", "Label", "")
			f.processed("m2")
			evs := f.events("cm")
			require.Len(t, evs, 2, "a repeat after expiry is a new Event")
			for _, ev := range evs {
				assert.False(t, ev.Get("series").Exists(), "%s has a series", ev.Name())
			}
		})
	}
}
