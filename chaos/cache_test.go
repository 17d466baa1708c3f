package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// recorder is a handler keeping the last version of each object it heard
// of, so that the suite can check every final version reached it.
type recorder struct {
	mu   sync.Mutex
	last map[string]string
	back []string // versions that went backwards
}

func newRecorder() *recorder { return &recorder{last: map[string]string{}} }

func (r *recorder) set(o *listwatch.Object) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := listwatch.Key(o)
	if prev, ok := r.last[k]; ok && rv(o.ResourceVersion()) < rv(prev) {
		r.back = append(r.back, fmt.Sprintf("%s: %s after %s", k, o.ResourceVersion(), prev))
	}
	r.last[k] = o.ResourceVersion()
}

func (r *recorder) OnAdd(o *listwatch.Object, _ bool) { r.set(o) }
func (r *recorder) OnUpdate(_, o *listwatch.Object)   { r.set(o) }
func (r *recorder) OnDelete(o *listwatch.Object, _ bool) {
	r.mu.Lock()
	delete(r.last, listwatch.Key(o))
	r.mu.Unlock()
}

func (r *recorder) state() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.last)
}

func rv(s string) uint64 { n, _ := strconv.ParseUint(s, 10, 64); return n }

// startInformer runs an informer of the namespace's configmaps through the
// proxy, with rec as its handler, until the test ends.
func (e *env) startInformer(t *testing.T, rec *recorder) *listwatch.Informer {
	t.Helper()
	inf := listwatch.NewInformer(e.resource(e.proxied, configMaps), 0)
	inf.Logger = e.logger
	// The faults follow each other faster than the backoff's two quiet
	// minutes, so with the default cap (30 s, each wait drawn from
	// [d, 2d)) a retry during a fault may wait out the steps earlier
	// faults climbed, up to a minute, past convergeBroken. (The relist a
	// restarted server's 410 asks for no longer does: the server's answer
	// starts the steps over, conformance 8.) The outage tests' cap keeps
	// each fault's recovery its own.
	inf.Reflector.Backoff = outageBackoff
	_, err := inf.AddEventHandler(rec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); testwait.RecvWithin(t, done, wait, "the informer's Run to return after cancel") })
	sctx, scancel := context.WithTimeout(ctx, wait)
	defer scancel()
	require.NoError(t, inf.Wait(sctx), "the informer did not sync through the proxy")
	return inf
}

// fill creates n configmaps on the direct path, a few at a time.
func (e *env) fill(t *testing.T, n int) {
	t.Helper()
	rc := e.resource(e.direct, configMaps)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	names := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range names {
				_, err := rc.Create(context.Background(), configMap(e.ns, fmt.Sprintf("cm-%04d", i), "0"))
				if err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		names <- i
	}
	close(names)
	testwait.GroupWithin(t, &wg, 2*wait, "the configmaps to be created")
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func configMap(ns, name, value string) []byte {
	return fmt.Appendf(nil, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q,"namespace":%q},"data":{"v":%q}}`, name, ns, value)
}

// serverState lists the configmaps on the direct path: key → version.
func (e *env) serverState(ctx context.Context) (map[string]string, error) {
	p, err := e.resource(e.direct, configMaps).List(ctx, httpwatch.ListOptions{})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(p.Items))
	for _, o := range p.Items {
		out[listwatch.Key(o)] = o.ResourceVersion()
	}
	return out, nil
}

func cacheState(inf *listwatch.Informer) map[string]string {
	out := map[string]string{}
	for _, o := range inf.Indexer().List() {
		out[listwatch.Key(o)] = o.ResourceVersion()
	}
	return out
}

// diff says how got differs from want, "" when equal.
func diff(what string, want, got map[string]string) string {
	if maps.Equal(want, got) {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			return fmt.Sprintf("%s: %s at %q, server at %s (%d objects, server %d)", what, k, got[k], want[k], len(got), len(want))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			return fmt.Sprintf("%s: %s, deleted on the server, still held (%d objects, server %d)", what, k, len(got), len(want))
		}
	}
	return what + ": differs"
}

// converge waits, at most bound, until the informer's cache and the
// handler's view both equal the server's state, and returns how long it
// took.
func (e *env) converge(t *testing.T, inf *listwatch.Informer, rec *recorder, bound time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(bound)
	last := "never compared"
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		want, err := e.serverState(ctx)
		cancel()
		if err != nil {
			last = "list on the direct path: " + err.Error()
		} else if last = diff("cache", want, cacheState(inf)) + diff("handler", want, rec.state()); last == "" {
			return time.Since(start)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cache did not equal the server's state within %s: %s (informer stats %+v)", bound, last, inf.Stats())
		}
		time.Sleep(250 * time.Millisecond) // polling the server, not synchronising with the informer
	}
}

// writer changes the namespace's configmaps on the direct path: it
// patches them in turn, and every tenth change deletes one and creates
// another. Failures (the server down) are counted, not fatal.
type writer struct {
	rc     *httpwatch.ResourceClient
	ns     string
	prefix string
	names  []string
	n      int
	failed int
}

func (e *env) newWriter(prefix string, names []string) *writer {
	return &writer{rc: e.resource(e.direct, configMaps), ns: e.ns, prefix: prefix, names: names}
}

func (w *writer) step(ctx context.Context) {
	w.n++
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	i := (w.n * 7919) % len(w.names)
	var err error
	if w.n%10 == 0 {
		if err = w.rc.Delete(ctx, w.names[i]); err == nil || httpwatch.IsNotFound(err) {
			w.names[i] = fmt.Sprintf("%s-%d", w.prefix, w.n)
			_, err = w.rc.Create(ctx, configMap(w.ns, w.names[i], "new"))
		}
	} else {
		_, err = w.rc.Patch(ctx, w.names[i], httpwatch.MergePatch, fmt.Appendf(nil, `{"data":{"v":"%d"}}`, w.n))
	}
	if err != nil {
		w.failed++
	}
}

// run changes objects about every interval until stop is closed, and
// returns once it has stopped.
func (w *writer) run(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.step(context.Background())
		}
	}
}

// discard is the logger of the parts on the direct path, whose lines are
// not this suite's subject.
var discard = slog.New(slog.DiscardHandler)
