package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	recorder "github.com/listwatch/listwatch/events"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/patch"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/store"
)

// seen records each reconcile as key → resourceVersion read → count.
type seen struct {
	mu  sync.Mutex
	got map[string]map[string]int
	by  map[string]string // key@rv → who
}

func newSeen() *seen { return &seen{got: map[string]map[string]int{}, by: map[string]string{}} }

// reconciler returns a Reconcile that reads the key's object from inf's
// cache and records the version it read.
func (s *seen) reconciler(who string, inf *listwatch.Informer) reconcile.Func {
	return func(ctx context.Context, key string) (reconcile.Result, error) {
		ns, name, _ := store.SplitKey(key)
		obj, err := inf.Lister().Get(ns, name)
		rv := "gone"
		if err == nil {
			rv = obj.ResourceVersion()
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.got[key] == nil {
			s.got[key] = map[string]int{}
		}
		s.got[key][rv]++
		s.by[key+"@"+rv] = who
		return reconcile.Result{}, nil
	}
}

// covers reports the first key of want whose version was not reconciled.
func (s *seen) covers(want map[string]string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, rv := range want {
		if s.got[k][rv] == 0 {
			return k + "@" + rv, false
		}
	}
	return "", true
}

func startRunner(t *testing.T, r *reconcile.Runner) (stop func() error) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(wait):
				t.Errorf("runner did not stop within %v", wait)
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// createMany creates n configmaps cm-0000... in ns, 16 at a time.
func createMany(t *testing.T, cms *httpwatch.ResourceClient, ns string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	var failed atomic.Int32
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := cms.Create(context.Background(), configMap(ns, fmt.Sprintf("cm-%04d", i), "0")); err != nil {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "creations failed")
}

// write changes random configmaps among n, from 8 goroutines, until
// writes changes were made.
func write(t *testing.T, cms *httpwatch.ResourceClient, n, writes int) {
	t.Helper()
	var wg sync.WaitGroup
	var left atomic.Int32
	left.Store(int32(writes))
	for range 8 {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				name := fmt.Sprintf("cm-%04d", rand.IntN(n))
				body, _ := patch.New().Set("data.v", fmt.Sprint(rand.Int())).Bytes()
				_, err := cms.Patch(context.Background(), name, httpwatch.MergePatch, body)
				assert.NoError(t, err)
			}
		})
	}
	wg.Wait()
}

// The runner reconciles 1,000 configmaps with 4 workers while a writer
// races it: every change is reconciled at its latest version, and no
// version of an object is reconciled twice (decision 29).
func TestRunnerReconcilesEachChangeOnce(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	createMany(t, cms, ns, 1000)
	inf := listwatch.NewInformer(cms, 0)
	s := newSeen()
	r := reconcile.New(inf, s.reconciler("r", inf))
	r.Workers = 4
	startRunner(t, r)
	write(t, cms, 1000, 2000)
	want := serverState(t, cms)
	require.Len(t, want, 1000)
	var missing string
	require.Eventually(t, func() bool { var ok bool; missing, ok = s.covers(want); return ok },
		wait, 50*time.Millisecond, "a change never reconciled: %s", func() string { return missing }())
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	for key, rvs := range s.got {
		for rv, n := range rvs {
			total += n
			assert.Equal(t, 1, n, "%s@%s reconciled %d times", key, rv, n)
		}
	}
	t.Logf("1000 objects, 2000 racing changes: %d reconciles", total)
}

// A change to an owned object reconciles its controller, through the
// ownerReferences the real server stored.
func TestRunnerRequeuesOwnerOfChangedObject(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	owner, err := cms.Create(context.Background(), []byte(`{"metadata":{"name":"x","labels":{"role":"owner"}}}`))
	require.NoError(t, err)
	owned, err := patch.New().Set("metadata.name", "y").Set("metadata.labels.role", "owned").
		Set("metadata.ownerReferences", []map[string]any{{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": owner.UID(), "controller": true}}).Bytes()
	require.NoError(t, err)
	_, err = cms.Create(context.Background(), owned)
	require.NoError(t, err)

	owners, ys := listwatch.NewInformer(cms, 0, listwatch.Selector{Label: "role=owner"}), listwatch.NewInformer(cms, 0, listwatch.Selector{Label: "role=owned"})
	var n atomic.Int32
	r := reconcile.New(owners, func(_ context.Context, key string) (reconcile.Result, error) {
		assert.Equal(t, ns+"/x", key)
		n.Add(1)
		return reconcile.Result{}, nil
	})
	r.Watches = []reconcile.Watch{{Informer: ys, Keys: reconcile.ControllerOf("", "ConfigMap")}}
	startRunner(t, r)
	require.Eventually(t, func() bool { return n.Load() >= 1 }, wait, 10*time.Millisecond)
	before := n.Load()
	_, err = cms.Patch(context.Background(), "y", httpwatch.MergePatch, []byte(`{"data":{"v":"2"}}`))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return n.Load() > before }, wait, 10*time.Millisecond, "the owner was not reconciled")
}

// Events recorded appear in the API as events.k8s.io/v1 Events the real
// server validated: the first occurrence created, repeats as its series.
// Decision 31.
func TestRecorderEventsAppearInTheAPI(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cm, err := c.Resource(configMaps).Namespace(ns).Create(context.Background(), configMap(ns, "a", "1"))
	require.NoError(t, err)
	evs := c.Resource(recorder.Resource)
	rec := recorder.New(evs, "listwatch.io/e2e", "e2e-1")
	rec.SeriesFlush = 200 * time.Millisecond
	var errs atomic.Int32
	rec.OnError = func(err error) { errs.Add(1); t.Log(err) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rec.Run(ctx) }()
	defer func() { cancel(); <-done }()

	for range 3 {
		rec.Event(cm, recorder.Warning, "Invalid", "Check", `value "v" is \ not allowed: é`)
	}
	var last *raw.Object
	require.Eventually(t, func() bool {
		p, err := evs.Namespace(ns).List(context.Background(), httpwatch.ListOptions{})
		if err != nil || len(p.Items) != 1 {
			return false
		}
		last = p.Items[0]
		return last.Get("series.count").Int() == 3
	}, wait, 50*time.Millisecond, "one Event with series.count 3")
	assert.Equal(t, cm.UID(), last.Get("regarding.uid").String())
	assert.Equal(t, `value "v" is \ not allowed: é`, last.Get("note").String())
	assert.Equal(t, "Warning", last.Get("type").String())
	assert.Zero(t, errs.Load())
	assert.Zero(t, rec.Dropped())
}

// Two runners on one lease: the leader reconciles, is stopped while a
// writer changes objects, and the other takes over; every change is
// reconciled by one of them at its latest version.
// Decision 30.
func TestRunnerLeaderHandoverLosesNoChange(t *testing.T) {
	c := client(t)
	ns := namespace(t, c)
	cms := c.Resource(configMaps).Namespace(ns)
	createMany(t, cms, ns, 200)
	s := newSeen()
	leases := c.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: ns})
	leading := make(chan string, 4)
	runner := func(id string) *reconcile.Runner {
		inf := listwatch.NewInformer(cms, 0)
		r := reconcile.New(inf, s.reconciler(id, inf))
		r.Workers = 4
		r.Election = &leader.Config{Leases: leases, Name: "runner", Identity: id, ReleaseOnCancel: true,
			LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond,
			OnNewLeader: func(l string) {
				if l == id {
					leading <- id
				}
			}}
		return r
	}
	stopA := startRunner(t, runner("a"))
	select {
	case id := <-leading:
		require.Equal(t, "a", id)
	case <-time.After(wait):
		t.Fatal("a never led")
	}
	startRunner(t, runner("b"))
	var writer sync.WaitGroup
	writer.Go(func() { write(t, cms, 200, 600) })
	require.NoError(t, stopA(), "a stops cleanly, giving the lease up")
	select {
	case id := <-leading:
		require.Equal(t, "b", id)
	case <-time.After(wait):
		t.Fatal("b never led")
	}
	writer.Wait()
	want := serverState(t, cms)
	var missing string
	require.Eventually(t, func() bool { var ok bool; missing, ok = s.covers(want); return ok },
		wait, 50*time.Millisecond, "a change lost in the handover: %s", func() string { return missing }())
}
