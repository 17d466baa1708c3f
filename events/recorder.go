package events

import (
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/faillog"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/raw"
)

// Resource addresses events.k8s.io/v1 events in every namespace; a
// Recorder writes each event in its object's namespace.
var Resource = httpwatch.Resource{Group: "events.k8s.io", Version: "v1", Resource: "events"}

// Event types.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Defaults New fills in. The rate limit is client-go's: 25 events of one
// object at once, then one every five minutes.
const (
	DefaultBuffer       = 1000
	DefaultBurst        = 25
	DefaultRefill       = 5 * time.Minute
	DefaultSeriesFlush  = 30 * time.Second
	DefaultSeriesExpiry = 6 * time.Minute
	maxNote             = 1024 // the server refuses longer notes
)

// Recorder writes Events. Set its fields before Run.
type Recorder struct {
	// Events addresses events.k8s.io/v1 events (Resource). Required.
	Events *httpwatch.ResourceClient
	// Controller is the reportingController, e.g. "example.com/labeller";
	// Instance the reportingInstance, e.g. the pod's name. Required.
	Controller, Instance string
	// Buffer is how many events may wait to be written; more are dropped.
	Buffer int
	// Burst events of one object are recorded at once, then one per
	// Refill; more are dropped.
	Burst  int
	Refill time.Duration
	// SeriesFlush is how often a growing series is written; SeriesExpiry
	// how long after its last occurrence a series ends.
	SeriesFlush, SeriesExpiry time.Duration
	// NotePerOccurrence makes the note part of what makes two events the
	// same, so that no note is lost: an occurrence whose note differs from
	// those of the series open is an Event of its own ("replicas=2", then
	// "replicas=3"), and only repeats of one note are counted in a series.
	// By default, as client-go, a series keeps the note of its first
	// occurrence.
	NotePerOccurrence bool
	// OnError, if set, sees every write that failed (the event is then
	// dropped). Logger hears them by the failure policy (decision 20): the
	// first of each cause at Warn, or at Error with what to grant when
	// retrying cannot cure it (a 403), then counted; the first write that
	// works again at Info.
	OnError func(error)
	Logger  *slog.Logger
	Clock   clock.Clock

	once     sync.Once
	failures faillog.Tracker // Run's goroutine only
	queue    chan pending
	dropped  atomic.Uint64

	lastNano int64 // the last eventName's time

	mu     sync.Mutex
	limits map[string]*rate.Limiter // regarding uid → its bucket
}

// pending is an occurrence waiting for Run.
type pending struct {
	key  seriesKey
	ref  ref
	note string
	at   time.Time
}

// ref is the regarding object.
type ref struct{ apiVersion, kind, namespace, name, uid, resourceVersion string }

// seriesKey says which occurrences make one series.
type seriesKey struct {
	uid, namespace, name, reason, action, typ string
	note                                      string // with NotePerOccurrence only
}

// New returns a Recorder writing through events with the defaults filled in.
func New(events *httpwatch.ResourceClient, controller, instance string) *Recorder {
	return &Recorder{
		Events: events, Controller: controller, Instance: instance,
		Buffer: DefaultBuffer, Burst: DefaultBurst, Refill: DefaultRefill,
		SeriesFlush: DefaultSeriesFlush, SeriesExpiry: DefaultSeriesExpiry,
		Logger: slog.Default(), Clock: clock.Real,
	}
}

func (r *Recorder) init() {
	r.once.Do(func() {
		r.queue = make(chan pending, max(r.Buffer, 1))
		r.limits = map[string]*rate.Limiter{}
		if r.Logger == nil {
			r.Logger = slog.Default()
		}
		if r.Clock == nil {
			r.Clock = clock.Real
		}
		r.failures.Logger, r.failures.Clock = r.Logger, r.Clock
	})
}

// Event records that action happened to regarding for reason, with a note
// for people. It never blocks: an event over the object's rate limit, or
// beyond the buffer, is dropped (Dropped counts them).
func (r *Recorder) Event(regarding *raw.Object, typ, reason, action, note string) {
	r.init()
	p := pending{
		ref: ref{regarding.APIVersion(), regarding.Kind(), regarding.Namespace(), regarding.Name(), regarding.UID(), regarding.ResourceVersion()},
		at:  r.Clock.Now(), note: truncate(note),
	}
	p.key = seriesKey{uid: p.ref.uid, namespace: p.ref.namespace, name: p.ref.name, reason: reason, action: action, typ: typ}
	if r.NotePerOccurrence {
		p.key.note = p.note
	}
	if !r.allow(p.ref, p.at) {
		r.dropped.Add(1)
		return
	}
	select {
	case r.queue <- p:
	default:
		r.dropped.Add(1)
	}
}

// Eventf is Event with a note formatted as fmt.Sprintf does.
func (r *Recorder) Eventf(regarding *raw.Object, typ, reason, action, format string, args ...any) {
	r.Event(regarding, typ, reason, action, fmt.Sprintf(format, args...))
}

// Dropped returns how many events were dropped: over an object's rate
// limit, beyond the buffer, or refused by the server.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

func (r *Recorder) allow(o ref, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := o.uid
	if id == "" {
		id = o.namespace + "/" + o.name
	}
	l, ok := r.limits[id]
	if !ok {
		l = rate.NewLimiter(rate.Every(r.Refill), max(r.Burst, 1))
		r.limits[id] = l
	}
	return l.AllowN(now, 1)
}

// forgetFullBuckets drops the buckets that have refilled: they hold no
// state a new one would not.
func (r *Recorder) forgetFullBuckets(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, l := range r.limits {
		if l.TokensAt(now) >= float64(l.Burst()) {
			delete(r.limits, id)
		}
	}
}

func truncate(note string) string {
	if len(note) <= maxNote {
		return note
	}
	cut := maxNote
	for cut > 0 && !utf8.RuneStart(note[cut]) {
		cut--
	}
	return note[:cut]
}

// microTime formats t as the API's MicroTime.
func microTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000Z07:00") }

// body is the Event of s: its first occurrence, and the series once it
// has occurred again.
func (r *Recorder) body(s *series) ([]byte, error) {
	p := s.first
	b := patch.New().
		Set("apiVersion", "events.k8s.io/v1").Set("kind", "Event").
		Set("metadata.name", s.name).Set("metadata.namespace", s.namespace).
		Set("eventTime", microTime(p.at)).
		Set("reportingController", r.Controller).Set("reportingInstance", r.Instance).
		Set("action", p.key.action).Set("reason", p.key.reason).Set("type", p.key.typ).
		Set("note", p.note).
		Set("regarding.apiVersion", p.ref.apiVersion).Set("regarding.kind", p.ref.kind).
		Set("regarding.name", p.ref.name)
	for _, f := range []struct{ path, v string }{
		{"regarding.namespace", p.ref.namespace}, {"regarding.uid", p.ref.uid},
		{"regarding.resourceVersion", p.ref.resourceVersion},
	} {
		if f.v != "" {
			b.Set(f.path, f.v)
		}
	}
	if s.count >= 2 {
		b.Set("series.count", s.count).Set("series.lastObservedTime", microTime(s.last))
	}
	return b.Bytes()
}

// eventName names a new Event about p's object: the object's name and a
// time in nanoseconds, made unique among this recorder's names (a clock
// may read the same twice). Run's goroutine only.
func (r *Recorder) eventName(p pending) string {
	r.lastNano = max(p.at.UnixNano(), r.lastNano+1)
	return p.ref.name + "." + strconv.FormatInt(r.lastNano, 16)
}
