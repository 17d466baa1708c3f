package reflector_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/reflector"
)

// sliceSource lists nothing and serves one watch replaying events.
type sliceSource struct{ events []httpwatch.Event }

func (s *sliceSource) ListPage(context.Context, httpwatch.ListOptions) (*httpwatch.Page, error) {
	return &httpwatch.Page{ResourceVersion: "1"}, nil
}

func (s *sliceSource) Watch(ctx context.Context, _ httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return &sliceWatcher{ctx: ctx, events: s.events, stop: make(chan struct{})}, nil
}

// sliceWatcher yields its events, then blocks until stopped.
type sliceWatcher struct {
	ctx    context.Context
	events []httpwatch.Event
	stop   chan struct{}
}

func (w *sliceWatcher) Next() (httpwatch.Event, error) {
	if len(w.events) > 0 {
		ev := w.events[0]
		w.events = w.events[1:]
		return ev, nil
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

func (s *countSink) Add(*httpwatch.Object) error { return nil }
func (s *countSink) Update(*httpwatch.Object) error {
	if s.seen++; s.seen == s.n {
		close(s.done)
	}
	return nil
}
func (s *countSink) Delete(*httpwatch.Object) error            { return nil }
func (s *countSink) Replace([]*httpwatch.Object, string) error { return nil }
func (s *countSink) Resync() error                             { return nil }

// BenchmarkReflectorWatchEvents measures what the reflector itself adds to
// each watch event (decoding excluded: the events are decoded up front), from
// the watcher's Next to the sink's Update.
func BenchmarkReflectorWatchEvents(b *testing.B) {
	const n = 10000
	events := make([]httpwatch.Event, n)
	for i := range events {
		o, err := httpwatch.NewObject(fmt.Appendf(nil, `{"metadata":{"name":"p%d","namespace":"ns","resourceVersion":"%d"}}`, i%100, i+2))
		if err != nil {
			b.Fatal(err)
		}
		events[i] = httpwatch.Event{Type: httpwatch.Modified, Object: o}
	}
	b.ReportAllocs()
	for b.Loop() {
		sink := &countSink{n: n, done: make(chan struct{})}
		r := reflector.New(&sliceSource{events: events}, sink)
		r.WatchList = false
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		<-sink.done
		cancel()
		<-done
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
}
