package listwatch

import (
	"context"
	"fmt"
	"io"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/cputime"
)

// burstSource lists nothing and serves one watch: a burst of MODIFIED
// events, decoded from JSON as Next returns them (a client's cost per
// event), or, with objs set, handed out ready-made, so that only the
// informer's own cost per event is left.
type burstSource struct {
	frames [][]byte
	objs   []*raw.Object
	// readEvery, if positive, makes the watcher announce a read of the
	// network (NotifyRead) once every readEvery events, as a client's watch
	// does with reads of about 80 KB of 4 KB events; otherwise the whole
	// burst is one read.
	readEvery int
}

// Info says nothing of a resource: the source is in memory.
func (s *burstSource) Info() httpwatch.SourceInfo { return httpwatch.SourceInfo{} }

func (s *burstSource) ListPage(context.Context, httpwatch.ListOptions) (*httpwatch.Page, error) {
	return &httpwatch.Page{ResourceVersion: "1"}, nil
}

func (s *burstSource) Watch(ctx context.Context, _ httpwatch.ListOptions) (httpwatch.Watcher, error) {
	w := &burstWatcher{ctx: ctx, src: s, stop: make(chan struct{})}
	if s.readEvery > 0 {
		return &readingWatcher{burstWatcher: w}, nil
	}
	return w, nil
}

// readingWatcher announces a read of the network every readEvery events.
type readingWatcher struct {
	*burstWatcher
	beforeRead func()
}

func (w *readingWatcher) NotifyRead(fn func()) { w.beforeRead = fn }

func (w *readingWatcher) Next() (httpwatch.Event, error) {
	if w.n%w.src.readEvery == 0 && w.beforeRead != nil {
		w.beforeRead()
	}
	return w.burstWatcher.Next()
}

type burstWatcher struct {
	ctx        context.Context
	src        *burstSource
	n          int
	stop       chan struct{}
	stopped    atomic.Bool
	beforeWait func()
}

// NotifyRead makes Next call fn once the burst is over, before it waits
// for the end: the whole burst is one read.
func (w *burstWatcher) NotifyRead(fn func()) { w.beforeWait = fn }

func (w *burstWatcher) Next() (httpwatch.Event, error) {
	if w.n == len(w.src.frames) {
		if w.beforeWait != nil {
			w.beforeWait()
		}
		select {
		case <-w.stop:
		case <-w.ctx.Done():
		}
		return httpwatch.Event{}, io.EOF
	}
	i := w.n
	w.n++
	if w.src.objs != nil {
		return httpwatch.Event{Type: httpwatch.Modified, Object: w.src.objs[i]}, nil
	}
	o, err := raw.NewObject(w.src.frames[i])
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

// BenchmarkInformerHandOff sends 20,000 watch events of a real pod (1,000
// pods, each changed 20 times) through the informer to one handler. It
// reports the goroutine wake-ups per event the runtime sampled (it samples
// about one transition in eight, so read the figure as relative): the
// hand-offs to the handler's goroutine, which must stay far below one per
// event; and the CPU time per event of the whole process, user
// and system, the figure to compare on a busy machine. "decoded" decodes
// each event from JSON as a client does; "prebuilt" hands out objects
// decoded beforehand, leaving the cost of the queue, the cache and the
// hand-offs alone. Their watcher reads the whole burst at once, so the
// queue is flushed only at its end; "reads" announces a read every 20
// events (httpwatch.Watcher.NotifyRead), as a client's watch does, and the
// queue is flushed then.
func BenchmarkInformerHandOff(b *testing.B) {
	// A list item has no kind; a watch event's object starts with it.
	tmpl := `{"kind":"Pod","apiVersion":"v1",` + fixturePod(b)[1:]
	frames := make([][]byte, 20000)
	objs := make([]*raw.Object, len(frames))
	for i := range frames {
		frames[i] = fmt.Appendf(nil, tmpl, fmt.Sprintf("pod-%06d", i%1000))
		o, err := raw.NewObject(frames[i])
		if err != nil {
			b.Fatal(err)
		}
		objs[i] = o
	}
	b.Run("decoded", func(b *testing.B) { benchHandOff(b, &burstSource{frames: frames}) })
	b.Run("prebuilt", func(b *testing.B) { benchHandOff(b, &burstSource{frames: frames, objs: objs}) })
	b.Run("reads", func(b *testing.B) { benchHandOff(b, &burstSource{frames: frames, readEvery: 20}) })
}

func benchHandOff(b *testing.B, src *burstSource) {
	events := len(src.frames)
	var wakeups uint64
	var cpu time.Duration
	for range b.N {
		inf := NewInformer(src, 0)
		inf.Reflector.PagedList = true
		var seen atomic.Int64
		all := make(chan struct{})
		count := func() {
			if seen.Add(1) == int64(events) {
				close(all)
			}
		}
		_, _ = inf.AddEventHandler(HandlerFuncs{
			AddFunc:    func(*Object, bool) { count() },
			UpdateFunc: func(_, _ *Object) { count() },
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		before, cpu0 := schedCount(), cputime.Used()
		go func() { inf.Run(ctx); close(done) }()
		<-all
		wakeups += schedCount() - before
		cpu += cputime.Used() - cpu0
		cancel()
		<-done
	}
	n := float64(b.N * events)
	b.ReportMetric(float64(wakeups)/n, "wakeups/event")
	b.ReportMetric(float64(cpu.Nanoseconds())/n, "cpu-ns/event")
	b.ReportMetric(n/b.Elapsed().Seconds(), "events/s")
}
