package processor_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/testkit/parked"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// marker is distributed as a real update after what a test checks: since a
// handler sees its notifications in order, once it has seen the marker it
// would already have seen anything distributed before it.
var marker = processor.Updated(-1, -1, false)

const markerCall = "update -1 -1"

// conformance 60, 62: resync notifications reach only the handlers whose
// period elapsed; real updates reach every handler.
func TestResyncGoesOnlyToDueHandlers(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	p := processor.New[int]()
	p.Clock = fake
	every10, every30, never := newRecorder(), newRecorder(), newRecorder()
	for h, period := range map[recorder]time.Duration{every10: 10 * time.Second, every30: 30 * time.Second, never: 0} {
		_, err := p.AddHandler(h, period, nil)
		require.NoError(t, err)
	}
	runStarted(t, p, every10, every30, never)

	// step distributes one resync after asking ShouldResync at now+d.
	step := func(d time.Duration, wantDue bool) {
		fake.Step(d)
		require.Equal(t, wantDue, p.ShouldResync(), "ShouldResync at %v", fake.Now().Unix())
		p.Distribute(processor.Updated(fake.Now().Second(), fake.Now().Second(), true))
		p.Distribute(marker)
	}
	step(0, false)
	p.Distribute(processor.Updated(1, 2, false)) // a real update goes to all
	step(10*time.Second, true)                   // t=10: every10
	step(20*time.Second, true)                   // t=30: every10 (due at 20) and every30
	step(5*time.Second, false)                   // t=35: nobody

	require.Equal(t, []string{markerCall, "update 1 2", "update 10 10", markerCall, "update 30 30", markerCall, markerCall},
		every10.next(t, 7))
	require.Equal(t, []string{markerCall, "update 1 2", markerCall, "update 30 30", markerCall, markerCall},
		every30.next(t, 6))
	require.Equal(t, []string{markerCall, "update 1 2", markerCall, markerCall, markerCall},
		never.next(t, 5))
}

// decision 8 (conformance 60 as intended): a handler with no resync period
// gets no resync notification, neither right after it joined (client-go's
// listeners start out "syncing") nor when other handlers resync, e.g. the
// same-resourceVersion updates of a relist.
func TestHandlerWithoutResyncPeriodNeverGetsResync(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	p := processor.New[int]()
	p.Clock = fake
	never, other := newRecorder(), newRecorder()
	_, err := p.AddHandler(never, 0, nil)
	require.NoError(t, err)
	_, err = p.AddHandler(other, time.Second, nil)
	require.NoError(t, err)
	runStarted(t, p, never, other)

	p.Distribute(processor.Updated(1, 1, true)) // a relist before any resync check
	fake.Step(time.Second)
	require.True(t, p.ShouldResync())
	p.Distribute(processor.Updated(2, 2, true)) // other's resync
	p.Distribute(marker)

	require.Equal(t, []string{markerCall}, never.next(t, 1))
	require.Equal(t, []string{"update 2 2", markerCall}, other.next(t, 2))
}

// conformance 61: a period under a second is raised to one second; 0 means
// no resync; a negative period is an error.
func TestResyncPeriodIsAtLeastOneSecond(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	p := processor.New[int]()
	p.Clock = fake
	require.Zero(t, p.ShortestResyncPeriod())

	fast, err := p.AddHandler(newRecorder(), 10*time.Millisecond, nil)
	require.NoError(t, err)
	require.Equal(t, time.Second, fast.ResyncPeriod())
	none, err := p.AddHandler(newRecorder(), 0, nil)
	require.NoError(t, err)
	require.Zero(t, none.ResyncPeriod())
	slow, err := p.AddHandler(newRecorder(), time.Minute, nil)
	require.NoError(t, err)
	require.Equal(t, time.Second, p.ShortestResyncPeriod())

	fake.Step(999 * time.Millisecond)
	require.False(t, p.ShouldResync())
	fake.Step(time.Millisecond)
	require.True(t, p.ShouldResync())

	fast.Remove()
	require.Equal(t, time.Minute, p.ShortestResyncPeriod())
	slow.Remove()
	require.Zero(t, p.ShortestResyncPeriod())

	_, err = p.AddHandler(newRecorder(), -time.Second, nil)
	require.ErrorContains(t, err, "negative resync period -1s")
	_, err = p.AddHandler(nil, 0, nil)
	require.ErrorContains(t, err, "nil handler")
}

// conformance 62: a due handler's next resync is one period after the check
// that found it due, not after its previous deadline; the first one is one
// period after it was added.
func TestShouldResyncSchedulesFromTheCheck(t *testing.T) {
	fake := clock.NewFake(time.Unix(0, 0))
	p := processor.New[int]()
	p.Clock = fake
	_, err := p.AddHandler(newRecorder(), 10*time.Second, nil)
	require.NoError(t, err)

	for _, tc := range []struct {
		step time.Duration
		due  bool
	}{
		{9 * time.Second, false},  // t=9
		{6 * time.Second, true},   // t=15, next due at 25
		{4 * time.Second, false},  // t=19
		{5 * time.Second, false},  // t=24: would be due had the next been 20
		{1 * time.Second, true},   // t=25
		{25 * time.Second, true},  // t=50: a late check is due once...
		{1 * time.Second, false},  // ...not once per missed period
		{-1 * time.Second, false}, // clock going back: not due
	} {
		fake.Step(tc.step)
		require.Equal(t, tc.due, p.ShouldResync(), "at t=%d", fake.Now().Unix())
	}
}

// conformance 63: a handler that does not return holds up neither
// Distribute nor the other handlers; its notifications wait in its buffer,
// which grows past the initial size.
func TestSlowHandlerBlocksNobody(t *testing.T) {
	p := processor.New[int]()
	p.BufferBlockSize = 16
	g := newGate()
	defer g.release()
	stuck, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(int, bool) { g.pass() }}, 0, nil)
	require.NoError(t, err)
	var fastSeen atomic.Int64
	_, err = p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(int, bool) { fastSeen.Add(1) }}, 0, nil)
	require.NoError(t, err)
	run(t, p)

	const n = 10_000
	distributed := make(chan struct{})
	go func() {
		defer close(distributed)
		for i := range n {
			p.Distribute(processor.Added(i, false))
		}
	}()
	select {
	case <-distributed:
	case <-time.After(wait):
		t.Fatal("Distribute blocked behind a stuck handler")
	}
	require.Eventually(t, func() bool { return fastSeen.Load() == n }, wait, time.Millisecond)
	g.waitEntered(t)
	require.Equal(t, n-1, stuck.Pending(), "all but the call in progress wait in the buffer")
}

// conformance 63: with 100 handlers and one of them stuck, the other 99 see
// every event.
func TestHundredHandlersOneStuck(t *testing.T) {
	p := processor.New[int]()
	g := newGate()
	defer g.release()
	_, err := p.AddHandler(processor.HandlerFuncs[int]{UpdateFunc: func(int, int) { g.pass() }}, 0, nil)
	require.NoError(t, err)
	seen := make([]atomic.Int64, 99)
	for i := range seen {
		_, err := p.AddHandler(processor.HandlerFuncs[int]{UpdateFunc: func(_, n int) {
			if int64(n) == seen[i].Load() { // also checks order
				seen[i].Add(1)
			}
		}}, 0, nil)
		require.NoError(t, err)
	}
	run(t, p)

	const events = 1000
	for i := range events {
		p.Distribute(processor.Updated(i, i, false))
	}
	require.Eventually(t, func() bool {
		for i := range seen {
			if seen[i].Load() != events {
				return false
			}
		}
		return true
	}, wait, time.Millisecond)
}

// conformance 64: one handler gets its notifications one at a time and in
// order; different handlers run at the same time.
func TestOrderWithinAHandlerConcurrencyAcrossHandlers(t *testing.T) {
	p := processor.New[int]()
	var in atomic.Int32
	bothIn := make(chan struct{})
	var overlap atomic.Bool
	got := make([][]int, 2)
	finished := []chan struct{}{make(chan struct{}), make(chan struct{})}
	for h := range 2 {
		var inCall atomic.Int32
		_, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(obj int, _ bool) {
			if inCall.Add(1) > 1 {
				overlap.Store(true)
			}
			defer inCall.Add(-1)
			switch obj {
			case 0:
				// Both handlers must be inside their first call at once:
				// were handlers run one after the other, this would hang.
				if in.Add(1) == 2 {
					close(bothIn)
				}
				select {
				case <-bothIn:
				case <-time.After(wait):
					t.Errorf("handler %d alone in its first call for %v: handlers do not run at the same time", h, wait)
				}
			case -1:
				close(finished[h])
				return
			}
			got[h] = append(got[h], obj)
		}}, 0, nil)
		require.NoError(t, err)
	}
	run(t, p)

	const n = 5000
	want := make([]int, n)
	for i := range n {
		want[i] = i
		p.Distribute(processor.Added(i, false))
	}
	p.Distribute(processor.Added(-1, false))
	for h := range 2 {
		select {
		case <-finished[h]:
		case <-time.After(wait):
			t.Fatalf("handler %d did not finish; the handlers may never have run at the same time", h)
		}
		require.Equal(t, want, got[h], "handler %d", h)
	}
	require.False(t, overlap.Load(), "a handler was called while its previous call was running")
}

// conformance 65 (decision 13, deliberately different): notifications distributed before
// Run are buffered, not blocking, and delivered in order once Run starts.
func TestDistributeBeforeRunIsBuffered(t *testing.T) {
	p := processor.New[int]()
	r := newRecorder()
	reg, err := p.AddHandler(r, 0, nil)
	require.NoError(t, err)
	p.Distribute(processor.Added(1, false))
	p.Distribute(processor.Updated(1, 2, false))
	p.Distribute(processor.Deleted(2, true))
	require.Equal(t, 3, reg.Pending())
	require.Empty(t, r, "no handler runs before Run")

	run(t, p)
	require.Equal(t, []string{"add 1 false", "update 1 2", "delete 2 true"}, r.next(t, 3))
}

func TestNotificationOfUnknownKindIsDropped(t *testing.T) {
	p := processor.New[int]()
	r := newRecorder()
	reg, err := p.AddHandler(r, 0, nil)
	require.NoError(t, err)
	p.Distribute(processor.Notification[int]{New: 1})
	p.Distribute(processor.Notification[int]{Kind: 9, New: 1})
	require.Zero(t, reg.Pending())
}

// conformance 66: a handler added while the processor runs gets the initial
// objects first, as initial-list adds, then what is distributed after; no
// other handler sees them.
func TestLateHandlerGetsInitialObjectsFirst(t *testing.T) {
	p := processor.New[int]()
	early := newRecorder()
	_, err := p.AddHandler(early, 0, nil)
	require.NoError(t, err)
	run(t, p)
	p.Distribute(processor.Added(1, true))
	p.Distribute(processor.Added(2, false))

	late := newRecorder()
	_, err = p.AddHandler(late, 0, []int{1, 2})
	require.NoError(t, err)
	p.Distribute(processor.Updated(2, 3, false))

	require.Equal(t, []string{"add 1 true", "add 2 false", "update 2 3"}, early.next(t, 3))
	require.Equal(t, []string{"add 1 true", "add 2 true", "update 2 3"}, late.next(t, 3))
}

// conformance 67: a registration has synced once the informer has and the
// handler returned from every initial-list add, whether distributed or
// replayed at registration, and even if it panicked in one.
func TestRegistrationHasSynced(t *testing.T) {
	p := processor.New[int]()
	var informerSynced atomic.Bool
	p.Synced = informerSynced.Load
	g := newGate()
	defer g.release()
	h := processor.HandlerFuncs[int]{AddFunc: func(obj int, _ bool) {
		g.pass()
		if obj == 2 {
			panic("handler bug")
		}
	}}
	early, err := p.AddHandler(h, 0, nil)
	require.NoError(t, err)
	require.False(t, early.HasSynced(), "informer not synced")
	run(t, p)

	p.Distribute(processor.Added(1, true))
	p.Distribute(processor.Added(2, true))
	informerSynced.Store(true)
	g.waitEntered(t)
	require.False(t, early.HasSynced(), "initial adds still being handled")

	late, err := p.AddHandler(h, 0, []int{3})
	require.NoError(t, err)
	require.False(t, late.HasSynced())
	noInitial, err := p.AddHandler(newRecorder(), 0, nil)
	require.NoError(t, err)
	require.True(t, noInitial.HasSynced(), "nothing to wait for")

	g.release()
	require.Eventually(t, early.HasSynced, wait, time.Millisecond)
	require.Eventually(t, late.HasSynced, wait, time.Millisecond)

	p.Distribute(processor.Added(4, false)) // not initial: does not count
	require.True(t, early.HasSynced())

	informerSynced.Store(false)
	require.False(t, early.HasSynced(), "follows the informer")
}

// A handler removed before it handled its initial list never reports synced:
// it never saw the objects.
func TestRemovedBeforeInitialListNeverSynced(t *testing.T) {
	p := processor.New[int]()
	reg, err := p.AddHandler(newRecorder(), 0, []int{1})
	require.NoError(t, err)
	require.NoError(t, reg.Shutdown(testwait.Context(t)), "never started: nothing to wait for")
	run(t, p)
	require.False(t, reg.HasSynced())
}

// conformance 68: Remove is idempotent and safe to call concurrently; it
// stops delivery at once and drops the buffer, without waiting for the call
// in progress; Shutdown waits for it.
func TestRemoveAndShutdown(t *testing.T) {
	p := processor.New[int]()
	g := newGate()
	defer g.release()
	var calls atomic.Int64
	reg, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(int, bool) {
		calls.Add(1)
		g.pass()
	}}, 0, nil)
	require.NoError(t, err)
	other := newRecorder()
	_, err = p.AddHandler(other, 0, nil)
	require.NoError(t, err)
	run(t, p)

	p.Distribute(processor.Added(1, false))
	p.Distribute(processor.Added(2, false))
	g.waitEntered(t)
	require.Equal(t, 1, reg.Pending())

	var removers sync.WaitGroup
	for range 10 {
		removers.Go(reg.Remove) // returns although the handler is stuck
	}
	testwait.Group(t, &removers, "Remove to return while the handler is stuck")
	require.Zero(t, reg.Pending(), "buffer dropped")
	p.Distribute(processor.Added(3, false))
	require.Zero(t, reg.Pending(), "nothing queued after removal")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = reg.Shutdown(ctx)
	require.ErrorIs(t, err, context.Canceled, "the handler is still in its call")
	require.ErrorContains(t, err, "shut down handler")

	g.release()
	ctx, cancel = context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, reg.Shutdown(ctx))
	require.NoError(t, reg.Shutdown(ctx), "twice is fine")
	require.Equal(t, int64(1), calls.Load())
	require.Equal(t, []string{"add 1 false", "add 2 false", "add 3 false"}, other.next(t, 3))

	var nilReg *processor.Registration
	nilReg.Remove()
	require.NoError(t, nilReg.Shutdown(ctx))
	require.False(t, nilReg.HasSynced())
	require.Zero(t, nilReg.Pending())
	(&processor.Registration{}).Remove()
}

// conformance 69: once Run has returned, AddHandler fails with ErrStopped
// and Distribute does nothing.
func TestStoppedProcessorRefusesHandlers(t *testing.T) {
	p := processor.New[int]()
	stop := run(t, p)
	stop()
	_, err := p.AddHandler(newRecorder(), 0, nil)
	require.ErrorIs(t, err, processor.ErrStopped)
	require.ErrorContains(t, err, "add handler: processor stopped")
	p.Distribute(processor.Added(1, false))
	require.False(t, p.ShouldResync())
	p.Run(context.Background()) // a second Run returns at once
}

// conformance 72, decision 4: a panicking handler is recovered and reported
// through OnPanic and the Logger, and goes on with its next notification.
func TestHandlerPanicIsRecoveredAndReported(t *testing.T) {
	p := processor.New[int]()
	var log bytes.Buffer
	p.Logger = slog.New(slog.NewTextHandler(&log, nil))
	type report struct {
		recovered any
		stack     string
	}
	reports := make(chan report, 10)
	p.OnPanic = func(recovered any, stack []byte) { reports <- report{recovered, string(stack)} }
	r := newRecorder()
	_, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(obj int, initial bool) {
		if obj == 1 {
			panic(fmt.Sprintf("handler bug on %d", obj))
		}
		r.OnAdd(obj, initial)
	}}, 0, nil)
	require.NoError(t, err)
	run(t, p)

	p.Distribute(processor.Added(1, false))
	p.Distribute(processor.Added(2, false))
	require.Equal(t, []string{"add 2 false"}, r.next(t, 1))
	rep := testwait.Recv(t, reports, "OnPanic to report the handler's panic")
	require.Equal(t, "handler bug on 1", rep.recovered)
	require.Contains(t, rep.stack, "TestHandlerPanicIsRecoveredAndReported", "the stack shows where the handler panicked")
	require.Contains(t, log.String(), "handler panicked")
	require.Contains(t, log.String(), "handler bug on 1")
	require.EqualValues(t, 1, p.Panics(), "counted")
}

// conformance 72: with RePanic set, a handler panic is reported and then
// crashes the program, as client-go does by default. The crash happens in a
// child process running this same test.
func TestRePanicCrashes(t *testing.T) {
	if os.Getenv("PROCESSOR_REPANIC_CHILD") == "1" {
		p := processor.New[int]()
		p.RePanic = true
		p.OnPanic = func(recovered any, _ []byte) { fmt.Fprintf(os.Stderr, "reported: %v\n", recovered) }
		_, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(int, bool) { panic("deliberate handler panic") }}, 0, nil)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		p.Distribute(processor.Added(1, false))
		p.Run(ctx) // the panic ends the process before ctx does
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRePanicCrashes$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PROCESSOR_REPANIC_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, "child should have crashed; output:\n%s", out)
	require.Contains(t, string(out), "reported: deliberate handler panic")
	require.Contains(t, string(out), "panic: deliberate handler panic")
}

// conformance 73: when Run's context ends, handlers get nothing more, what
// they had not received is dropped, and Run returns only once the handler
// call in progress returned and every listener goroutine exited.
func TestRunWaitsForHandlersAndDropsTheRest(t *testing.T) {
	p := processor.New[int]()
	g := newGate()
	defer g.release()
	r := newRecorder()
	reg, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(obj int, initial bool) {
		r.OnAdd(obj, initial)
		g.pass()
	}}, 0, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		p.Run(ctx)
	}()

	for i := range 3 {
		p.Distribute(processor.Added(i, false))
	}
	g.waitEntered(t)
	cancel()
	require.Eventually(t, func() bool { return reg.Pending() == 0 }, wait, time.Millisecond, "stop drops the buffer")
	// Either Run has returned or it is parked waiting for the handler: once
	// one of the two holds, whether it returned is settled.
	require.Eventually(t, func() bool {
		select {
		case <-returned:
			return true
		default:
			return parked.In("processor.(*Processor[...]).Run(", "sync.WaitGroup.Wait")
		}
	}, wait, time.Millisecond)
	select {
	case <-returned:
		t.Fatal("Run returned while a handler was still running")
	default:
	}
	g.release()
	select {
	case <-returned:
	case <-time.After(wait):
		t.Fatal("Run did not return after the handler did")
	}
	require.Equal(t, []string{"add 0 false"}, r.next(t, 1))
	require.Empty(t, r)
}

// Handlers added and removed while notifications flow leave no goroutine
// behind (TestMain checks with goleak) and never block the distributor.
func TestAddRemoveWhileDistributing(t *testing.T) {
	p := processor.New[int]()
	p.BufferBlockSize = 4
	stop := run(t, p)
	flowing := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-flowing:
				return
			default:
			}
			p.Distribute(processor.Added(i, false))
		}
	}()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				var seen atomic.Int64
				reg, err := p.AddHandler(processor.HandlerFuncs[int]{AddFunc: func(int, bool) { seen.Add(1) }}, time.Duration(i)*time.Second, []int{1, 2, 3})
				if !assertNoError(t, err) {
					return
				}
				if (w+i)%2 == 0 {
					reg.Remove()
					continue
				}
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				err = reg.Shutdown(ctx)
				cancel()
				assertNoError(t, err)
			}
		})
	}
	testwait.Group(t, &wg, "every Remove and Shutdown to return")
	close(flowing)
	testwait.Recv(t, done, "the distributor to stop")
	stop()
}

func assertNoError(t *testing.T, err error) bool {
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}
