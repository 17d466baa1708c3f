package listwatch

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/snapshot"
	"github.com/listwatch/listwatch/testkit/cputime"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/watchtest"
)

// BenchmarkInformerSources sends the burst of BenchmarkInformerHandOff,
// read 20 events at a time as a client reads a watch, through an informer
// on the source itself ("plain"), on a shard member's Source that owns
// every key ("sharded"), and resumed from a snapshot of the same pods
// ("warm"). Each must be woken once per read, as the plain one is
// (decision 33): the figures of the three should match. Count the futex
// calls of one with strace -f -c -e futex on the test binary.
func BenchmarkInformerSources(b *testing.B) {
	frames := burstFrames(b)
	src := &burstSource{frames: frames, readEvery: 20}
	b.Run("plain", func(b *testing.B) {
		benchSource(b, len(frames), func() *Informer { return NewInformer(src, 0) })
	})
	b.Run("sharded", func(b *testing.B) {
		m := allKeysMember(b)
		benchSource(b, len(frames), func() *Informer { return NewInformer(m.Source(src), 0) })
	})
	b.Run("warm", func(b *testing.B) {
		dir := b.TempDir()
		benchSource(b, len(frames), func() *Informer {
			inf := NewInformer(src, 0)
			inf.Snapshot = snapshot.Options{Dir: dir, Identity: "burst", Interval: time.Hour}
			saveBurstSnapshot(b, inf, src)
			return inf
		})
	})
}

// burstFrames is the burst of BenchmarkInformerHandOff: 20,000 watch
// events of 1,000 real pods, each changed 20 times.
func burstFrames(b *testing.B) [][]byte {
	tmpl := `{"kind":"Pod","apiVersion":"v1",` + fixturePod(b)[1:]
	frames := make([][]byte, 20000)
	for i := range frames {
		frames[i] = fmt.Appendf(nil, tmpl, fmt.Sprintf("pod-%06d", i%1000))
	}
	return frames
}

// allKeysMember runs the only member of a group, so that it owns every key.
func allKeysMember(b *testing.B) *shard.Member {
	srv := watchtest.NewServer()
	srv.AddResource(watchtest.Leases, watchtest.Definition{})
	b.Cleanup(srv.Close)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(client.CloseIdleConnections)
	m, err := shard.New(shard.Config{
		Leases: client.Resource(leasetest.Resource), Group: "g", Identity: "a",
		LeaseDuration: time.Minute, RenewDeadline: 40 * time.Second, RetryPeriod: 10 * time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	deadline := time.Now().Add(10 * time.Second)
	for !m.Owns("ns/pod-000000") {
		if time.Now().After(deadline) {
			b.Fatal("the member owns no key after 10 s")
		}
		time.Sleep(time.Millisecond) // a benchmark's set-up, not a test's
	}
	return m
}

// saveBurstSnapshot writes the snapshot inf will resume from: the burst's
// 1,000 pods at the version its source lists.
func saveBurstSnapshot(b *testing.B, inf *Informer, src *burstSource) {
	key, err := snapshotKey(src, inf, inf.Snapshot)
	if err != nil {
		b.Fatal(err)
	}
	objs := make([]*raw.Object, 1000)
	for i := range objs {
		if objs[i], err = raw.NewObject(src.frames[i]); err != nil {
			b.Fatal(err)
		}
	}
	snap := &snapshot.Snapshot{Key: key, ResourceVersion: "1", Objects: objs, Written: time.Now()}
	if err := snapshot.WriteFile(inf.Snapshot.WithDefaults().Path(key), snap); err != nil {
		b.Fatal(err)
	}
}

// benchSource runs b.N informers from newInformer until their handler has
// heard the burst's events: adds and updates, not a snapshot's initial adds.
func benchSource(b *testing.B, events int, newInformer func() *Informer) {
	var wakeups uint64
	var cpu time.Duration
	for range b.N {
		inf := newInformer()
		inf.Reflector.PagedList = true
		heard := make(chan struct{}, events)
		_, _ = inf.AddEventHandler(HandlerFuncs{
			AddFunc: func(_ *Object, initial bool) {
				if !initial {
					heard <- struct{}{}
				}
			},
			UpdateFunc: func(_, _ *Object) { heard <- struct{}{} },
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		before, cpu0 := schedCount(), cputime.Used()
		go func() { inf.Run(ctx); close(done) }()
		for range events {
			<-heard
		}
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
