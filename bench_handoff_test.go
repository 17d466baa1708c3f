package listwatch

import (
	"context"
	"fmt"
	"io"
	"runtime/metrics"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
)

// burstSource lists nothing and serves one watch: a burst of MODIFIED
// events decoded from JSON as Next returns them, a client's cost per event.
type burstSource struct{ frames [][]byte }

func (s *burstSource) ListPage(context.Context, httpwatch.ListOptions) (*httpwatch.Page, error) {
	return &httpwatch.Page{ResourceVersion: "1"}, nil
}

func (s *burstSource) Watch(ctx context.Context, _ httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return &burstWatcher{ctx: ctx, frames: s.frames, stop: make(chan struct{})}, nil
}

type burstWatcher struct {
	ctx     context.Context
	frames  [][]byte
	n       int
	stop    chan struct{}
	stopped atomic.Bool
}

func (w *burstWatcher) Next() (httpwatch.Event, error) {
	if w.n == len(w.frames) {
		select {
		case <-w.stop:
		case <-w.ctx.Done():
		}
		return httpwatch.Event{}, io.EOF
	}
	o, err := raw.NewObject(w.frames[w.n])
	w.n++
	return httpwatch.Event{Type: httpwatch.Modified, Object: o}, err
}

func (w *burstWatcher) Stop() {
	if w.stopped.CompareAndSwap(false, true) {
		close(w.stop)
	}
}

// schedCount returns how many goroutine wake-ups (runnable to running) the
// runtime has sampled so far: the count of /sched/latencies.
func schedCount() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

// BenchmarkInformerHandOff sends 20,000 watch events of a real pod through
// the informer to one handler and reports the goroutine wake-ups per event
// the runtime sampled (it samples about one transition in eight, so read
// the figure as relative): the hand-offs between the reflector, the
// queue's Pop and the handler's goroutine, which must stay far below one
// per event (issue 29).
func BenchmarkInformerHandOff(b *testing.B) {
	tmpl := fixturePod(b)
	frames := make([][]byte, 20000)
	for i := range frames {
		frames[i] = fmt.Appendf(nil, tmpl, fmt.Sprintf("pod-%06d", i%1000))
	}
	for range b.N {
		inf := NewInformer(&burstSource{frames: frames}, 0)
		inf.Reflector.WatchList = false
		var seen atomic.Int64
		all := make(chan struct{})
		_, _ = inf.AddEventHandler(HandlerFuncs{
			AddFunc: func(*Object, bool) {
				if seen.Add(1) == int64(len(frames)) {
					close(all)
				}
			},
			UpdateFunc: func(_, _ *Object) {
				if seen.Add(1) == int64(len(frames)) {
					close(all)
				}
			},
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		before := schedCount()
		go func() { inf.Run(ctx); close(done) }()
		<-all
		b.ReportMetric(float64(schedCount()-before)/float64(len(frames)), "wakeups/event")
		cancel()
		<-done
	}
	b.ReportMetric(float64(b.N*len(frames))/b.Elapsed().Seconds(), "events/s")
}
