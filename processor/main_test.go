package processor_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/processor"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds every blocking step of a test, so a bug fails the test rather
// than hanging it.
const wait = 10 * time.Second

// recorder is a Handler that describes each call on a channel.
type recorder chan string

func newRecorder() recorder { return make(recorder, 100_000) }

func (r recorder) OnAdd(obj int, initial bool)    { r <- fmt.Sprintf("add %d %t", obj, initial) }
func (r recorder) OnUpdate(oldObj, newObj int)    { r <- fmt.Sprintf("update %d %d", oldObj, newObj) }
func (r recorder) OnDelete(obj int, unknown bool) { r <- fmt.Sprintf("delete %d %t", obj, unknown) }

// next returns the next n calls r saw.
func (r recorder) next(t *testing.T, n int) []string {
	t.Helper()
	out := make([]string, 0, n)
	timeout := time.After(wait)
	for range n {
		select {
		case s := <-r:
			out = append(out, s)
		case <-timeout:
			t.Fatalf("handler saw %d calls within %v, want %d: %q", len(out), wait, n, out)
		}
	}
	return out
}

// run runs p until the test ends and waits for Run to return then.
func run[T any](t *testing.T, p *processor.Processor[T]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Run(ctx)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(wait):
			t.Errorf("Run did not return within %v of its context ending", wait)
		}
	}
	t.Cleanup(stop)
	return stop
}

// runStarted runs p as run does and returns once Run has started the
// listeners of recs (each has seen a marker): a test that steps the clock
// must not race Run, which schedules the first resyncs from the time it
// starts.
func runStarted(t *testing.T, p *processor.Processor[int], recs ...recorder) {
	t.Helper()
	run(t, p)
	p.Distribute(marker)
	for _, r := range recs {
		require.Equal(t, []string{markerCall}, r.next(t, 1), "the listener to start")
	}
}

// gate blocks a handler until released. Tests defer release, so that it
// runs before the Cleanup that waits for Run to return.
type gate struct {
	entered chan struct{} // one value per blocked call
	open    chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 1000), open: make(chan struct{})} }

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

func (g *gate) pass() {
	select {
	case g.entered <- struct{}{}:
	default: // nobody is counting calls this far
	}
	<-g.open
}

func (g *gate) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(wait):
		t.Fatalf("handler not called within %v", wait)
	}
}
