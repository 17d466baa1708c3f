package reflector_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
)

// sliceSource lists nothing and serves one watch replaying events; with
// raw set, each Next decodes its object first, as a client's watch does.
type sliceSource struct {
	events []httpwatch.Event
	raw    [][]byte
}

// Info says nothing of a resource: the source is in memory.
func (s *sliceSource) Info() httpwatch.SourceInfo { return httpwatch.SourceInfo{} }

func (s *sliceSource) ListPage(context.Context, httpwatch.ListOptions) (*httpwatch.Page, error) {
	return &httpwatch.Page{ResourceVersion: "1"}, nil
}

func (s *sliceSource) Watch(ctx context.Context, _ httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return &sliceWatcher{ctx: ctx, events: s.events, raw: s.raw, stop: make(chan struct{})}, nil
}

// sliceWatcher yields its events, then blocks until stopped.
type sliceWatcher struct {
	ctx        context.Context
	events     []httpwatch.Event
	raw        [][]byte
	stop       chan struct{}
	beforeWait func()
}

// NotifyRead makes Next call fn once the events are out, before it blocks:
// they are one read.
func (w *sliceWatcher) NotifyRead(fn func()) { w.beforeWait = fn }

func (w *sliceWatcher) Next() (httpwatch.Event, error) {
	if len(w.raw) > 0 {
		o, err := raw.NewObject(w.raw[0])
		w.raw = w.raw[1:]
		return httpwatch.Event{Type: httpwatch.Modified, Object: o}, err
	}
	if len(w.events) > 0 {
		ev := w.events[0]
		w.events = w.events[1:]
		return ev, nil
	}
	if w.beforeWait != nil {
		w.beforeWait()
	}
	select {
	case <-w.stop:
	case <-w.ctx.Done():
	}
	return httpwatch.Event{}, io.EOF
}

func (w *sliceWatcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

// countSink counts updates and says when it has seen n.
type countSink struct {
	n, seen int
	done    chan struct{}
}

func (s *countSink) Add(*raw.Object) error { return nil }
func (s *countSink) Update(*raw.Object) error {
	if s.seen++; s.seen == s.n {
		close(s.done)
	}
	return nil
}
func (s *countSink) Delete(*raw.Object) error            { return nil }
func (s *countSink) Replace([]*raw.Object, string) error { return nil }
func (s *countSink) Resync() error                       { return nil }

// BenchmarkReflectorWatchEvents measures the time per watch event from the
// watcher's Next to the sink's Update: with the events decoded up front
// (what the reflector itself adds), and with Next decoding a 4 KB pod
// (what a watch of pods costs end to end, the network aside).
func BenchmarkReflectorWatchEvents(b *testing.B) {
	const n = 10000
	pod := benchPod(b)
	for _, decode := range []bool{false, true} {
		b.Run(fmt.Sprintf("decodeInNext=%v", decode), func(b *testing.B) {
			src := &sliceSource{}
			for i := range n {
				// As in a watch event, kind and apiVersion come first.
				data := `{"kind":"Pod","apiVersion":"v1",` + fmt.Sprintf(pod, fmt.Sprintf("p%d", i%100))[1:]
				data = strings.Replace(data, `"resourceVersion":"`, `"resourceVersion":"1`+strconv.Itoa(i), 1)
				if decode {
					src.raw = append(src.raw, []byte(data))
					continue
				}
				o, err := raw.NewObject([]byte(data))
				if err != nil {
					b.Fatal(err)
				}
				src.events = append(src.events, httpwatch.Event{Type: httpwatch.Modified, Object: o})
			}
			b.ReportAllocs()
			for b.Loop() {
				sink := &countSink{n: n, done: make(chan struct{})}
				r := reflector.New(&sliceSource{events: src.events, raw: src.raw}, sink)
				r.PagedList = true
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { r.Run(ctx); close(done) }()
				<-sink.done
				cancel()
				<-done
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}
