package prommetrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// informerDescs are the series of one informer and its snapshots.
type informerDescs struct {
	synced, restored, objects, bytes, queued, lastSync *prometheus.Desc
	errors, restarts, lists, watches, events, panics   *prometheus.Desc
	saved, saveBytes, saveTook, saveFailures           *prometheus.Desc
}

func newInformerDescs() informerDescs {
	labels := []string{"informer", "resource", "namespace"}
	desc := func(name, help string, extra ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, append(labels, extra...), nil)
	}
	return informerDescs{
		synced:   desc("listwatch_informer_synced", "1 once the cache holds the server's state: its first list, or a restored snapshot the server confirmed."),
		restored: desc("listwatch_informer_restored_objects", "Objects restored from a snapshot as the informer started, 0 if it listed; it stays set, so a warm start can be seen after the fact (decision 32)."),
		objects:  desc("listwatch_informer_objects", "Objects in the cache."),
		bytes:    desc("listwatch_informer_bytes", "Bytes of JSON of the objects in the cache."),
		queued:   desc("listwatch_informer_queued", "Keys with changes not yet applied to the cache."),
		lastSync: desc("listwatch_informer_last_sync_timestamp_seconds",
			"When the server last showed the cache current: a list, a watch's first event, a watch the server ended cleanly. 0 before."),
		errors: desc("listwatch_informer_sync_errors_total",
			"List and watch errors: permanent (retrying cannot cure them: 401, 403, 404 of a collection), routine (410, a cut watch), transient.", "kind"),
		restarts: desc("listwatch_informer_watch_restarts_total",
			"Watches that ended and were reopened, by cause: timeout (the server's), gone (410, relisted), silent (decision 36), cut, failed.", "cause"),
		lists:        desc("listwatch_informer_lists_total", "Full syncs: the first list and every relist (paged lists and watch-lists)."),
		watches:      desc("listwatch_informer_watches_total", "Watch streams opened."),
		events:       desc("listwatch_informer_events_total", "Watch events received, bookmarks included."),
		panics:       desc("listwatch_informer_handler_panics_total", "Handler panics recovered."),
		saved:        desc("listwatch_snapshot_last_save_timestamp_seconds", "When the informer last saved its snapshot. 0 before."),
		saveBytes:    desc("listwatch_snapshot_bytes", "Size of the last snapshot saved."),
		saveTook:     desc("listwatch_snapshot_save_duration_seconds", "How long the last snapshot took to write, fsyncs included."),
		saveFailures: desc("listwatch_snapshot_save_failures_total", "Snapshots that could not be saved."),
	}
}

func (d informerDescs) describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{d.synced, d.restored, d.objects, d.bytes, d.queued, d.lastSync,
		d.errors, d.restarts, d.lists, d.watches, d.events, d.panics, d.saved, d.saveBytes, d.saveTook, d.saveFailures} {
		ch <- x
	}
}

func (d informerDescs) collect(ch chan<- prometheus.Metric, n named) {
	inf, lv := n.inf, []string{n.informer, n.resource, n.namespace}
	st := inf.Stats()
	gauge := func(desc *prometheus.Desc, v float64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append(lv, extra...)...)
	}
	counter := func(desc *prometheus.Desc, v int64, extra ...string) {
		ch <- prometheus.MustNewConstMetric(desc, prometheus.CounterValue, float64(v), append(lv, extra...)...)
	}
	gauge(d.synced, bit(inf.HasSynced()))
	gauge(d.restored, float64(st.Snapshot.Restored))
	gauge(d.objects, float64(st.Objects))
	gauge(d.bytes, float64(bytesOf(inf)))
	gauge(d.queued, float64(st.Queued))
	gauge(d.lastSync, seconds(st.LastSync))
	counter(d.errors, st.PermanentErrors, "permanent")
	counter(d.errors, st.RoutineErrors, "routine")
	counter(d.errors, st.Errors-st.PermanentErrors-st.RoutineErrors, "transient")
	for cause, v := range map[string]int64{"timeout": st.WatchEnds.Timeout, "gone": st.WatchEnds.Gone,
		"silent": st.WatchEnds.Silent, "cut": st.WatchEnds.Cut, "failed": st.WatchEnds.Failed} {
		counter(d.restarts, v, cause)
	}
	counter(d.lists, st.Lists)
	counter(d.watches, st.Watches)
	counter(d.events, st.Events)
	counter(d.panics, int64(st.HandlerPanics))
	if inf.Snapshot.Dir == "" {
		return
	}
	gauge(d.saved, seconds(st.Snapshot.Saved))
	gauge(d.saveBytes, float64(st.Snapshot.Bytes))
	gauge(d.saveTook, st.Snapshot.Took.Seconds())
	counter(d.saveFailures, st.Snapshot.Failures)
}

// seconds is t as a Unix time in seconds, 0 for the zero time.
func seconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}
