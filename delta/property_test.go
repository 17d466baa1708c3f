package delta_test

import (
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// tags gives most objects two index values, so multi-value entries are
// added, moved and removed.
func tags(x *obj) ([]string, error) {
	n, err := strconv.Atoi(x.v)
	if err != nil {
		return nil, err
	}
	out := []string{"mod" + strconv.Itoa(n%3)}
	if n%2 == 0 {
		out = append(out, "even")
	}
	return out, nil
}

var testIndexers = indexer.Indexers[*obj]{
	indexer.Namespace: indexer.NamespaceIndex[*obj],
	"tags":            tags,
}

// world is the API server of a property run: the truth, and a source of
// random events, some of which the FIFO never hears of (a dropped watch).
type world struct {
	rng     *rand.Rand
	names   int // distinct keys are 3 namespaces x names
	dropPct int // share of events the FIFO never hears of
	objs    map[string]*obj
	version int
	missed  bool // an event was dropped since the last relist
}

func newWorld(seed int64, names, dropPct int) *world {
	return &world{rng: rand.New(rand.NewSource(seed)), names: names, dropPct: dropPct, objs: map[string]*obj{}}
}

func (w *world) list() []*obj {
	out := make([]*obj, 0, len(w.objs))
	for _, k := range slices.Sorted(mapKeys(w.objs)) {
		out = append(out, w.objs[k])
	}
	w.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func (w *world) pick() *obj {
	keys := slices.Sorted(mapKeys(w.objs))
	if len(keys) == 0 {
		return nil
	}
	return w.objs[keys[w.rng.Intn(len(keys))]]
}

func (w *world) deliver() bool {
	if w.rng.Intn(100) >= w.dropPct {
		return true
	}
	w.missed = true
	return false
}

// step performs one random producer action on f; it reports false for
// "pop now" so the caller can consume.
func (w *world) step(t *testing.T, f *delta.FIFO[*obj]) bool {
	w.version++
	v := strconv.Itoa(w.version)
	switch r := w.rng.Intn(100); {
	case r < 22: // create (or recreate)
		x := &obj{ns: fmt.Sprint("n", w.rng.Intn(3)), name: fmt.Sprint("o", w.rng.Intn(w.names)), v: v}
		k := x.ns + "/" + x.name
		_, existed := w.objs[k]
		w.objs[k] = x
		if w.deliver() {
			if existed {
				require.NoError(t, f.Update(x))
			} else {
				require.NoError(t, f.Add(x))
			}
		}
	case r < 47: // update
		if old := w.pick(); old != nil {
			x := &obj{ns: old.ns, name: old.name, v: v}
			w.objs[old.ns+"/"+old.name] = x
			if w.deliver() {
				require.NoError(t, f.Update(x))
			}
		}
	case r < 62: // delete
		if old := w.pick(); old != nil {
			delete(w.objs, old.ns+"/"+old.name)
			if w.deliver() {
				require.NoError(t, f.Delete(old))
			}
		}
	case r < 70:
		require.NoError(t, f.Replace(w.list(), v))
		w.missed = false
	case r < 76:
		require.NoError(t, f.Resync())
	default:
		return false
	}
	return true
}

// popOne pops and applies, asking for a requeue now and then. slow yields
// the processor before applying, widening the window in which producers
// race the Pop in progress.
func popOne(rng *rand.Rand, f *delta.FIFO[*obj], c *indexer.Cache[*obj], slow bool) error {
	requeue := rng.Intn(10) == 0
	_, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error {
		if slow {
			for range 3 {
				runtime.Gosched()
			}
		}
		if requeue {
			return fmt.Errorf("flaky handler: %w", delta.ErrRequeue)
		}
		return apply(c, d)
	})
	if errors.Is(err, delta.ErrRequeue) {
		return nil
	}
	return err
}

func checkConverged(t *testing.T, w *world, c *indexer.Cache[*obj]) {
	t.Helper()
	want := map[string]string{}
	for k, x := range w.objs {
		want[k] = x.v
	}
	require.Equal(t, want, content(c), "cache equals the world")

	fresh := indexer.New(key, testIndexers)
	for _, o := range c.List() {
		require.NoError(t, fresh.Add(o))
	}
	for name := range testIndexers {
		got, err := c.ListIndexFuncValues(name)
		require.NoError(t, err)
		exp, err := fresh.ListIndexFuncValues(name)
		require.NoError(t, err)
		require.ElementsMatch(t, exp, got, "values of index %s", name)
		for _, v := range got {
			gk, err := c.IndexKeys(name, v)
			require.NoError(t, err)
			ek, err := fresh.IndexKeys(name, v)
			require.NoError(t, err)
			require.NotEmpty(t, gk, "%s=%s kept an empty set", name, v)
			require.ElementsMatch(t, ek, gk, "%s=%s", name, v)
		}
	}
}

// Random add/update/delete/replace/resync sequences, with dropped events,
// requeues and pops interleaved, always converge: after a final relist and
// drain the cache equals the world and its indices equal a rebuild.
func TestPropertyConverges(t *testing.T) {
	for seed := int64(1); seed <= 150; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			w := newWorld(seed, 25, 15)
			c := indexer.New(key, testIndexers)
			f := delta.NewFIFO(key)
			f.KnownObjects = c
			for range 400 {
				if !w.step(t, f) && f.Len() > 0 {
					require.NoError(t, popOne(w.rng, f, c, false))
				}
			}
			if w.missed {
				require.NoError(t, f.Replace(w.list(), "final"))
			}
			for f.Len() > 0 {
				require.NoError(t, popOne(w.rng, f, c, false))
			}
			assert.True(t, f.HasSynced())
			checkConverged(t, w, c)
		})
	}
}

// The same, with a producer, a consumer and readers running at once under
// -race. Interleavings vary from run to run; the outcome must not.
func TestPropertyConvergesConcurrently(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// Few keys and many dropped events, so that relists and
			// deletes often hit the key being popped.
			w := newWorld(seed, 8, 30)
			c := indexer.New(key, testIndexers)
			f := delta.NewFIFO(key)
			f.KnownObjects = c

			var wg sync.WaitGroup
			wg.Go(func() { // consumer
				rng := rand.New(rand.NewSource(-seed))
				for {
					err := popOne(rng, f, c, true)
					if errors.Is(err, delta.ErrClosed) {
						return
					}
					assert.NoError(t, err)
				}
			})
			stop := make(chan struct{})
			wg.Go(func() { // readers
				for {
					select {
					case <-stop:
						return
					default:
					}
					for _, k := range f.ListKeys() {
						f.GetByKey(k)
					}
					_, _ = f.Len(), f.HasSynced()
					_, _ = c.ByIndex("tags", "even")
					// Yield, or with GOMAXPROCS=1 this loop holds the only
					// P for a whole time slice at each Gosched of the
					// producer: minutes per seed instead of milliseconds.
					runtime.Gosched()
				}
			})
			for range 600 {
				w.step(t, f)
				runtime.Gosched()
			}
			// Only dropped events call for a last relist; one done
			// regardless would also paper over a lost delete.
			if w.missed {
				require.NoError(t, f.Replace(w.list(), "final"))
			}
			f.Close()
			close(stop)
			testwait.Group(t, &wg, "the producers and the Pop loop to stop after Close")
			require.Equal(t, 0, f.Len())
			checkConverged(t, w, c)
		})
	}
}

// Readers, writers, a Pop loop and Close all at once; Close must release a
// blocked Pop and leave no goroutine behind (TestMain checks for leaks).
func TestConcurrentCloseReleasesPop(t *testing.T) {
	f, c := newInformerFIFO()
	var wg sync.WaitGroup
	popped := 0
	wg.Go(func() {
		for {
			_, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error { return apply(c, d) })
			if errors.Is(err, delta.ErrClosed) {
				return
			}
			assert.NoError(t, err)
			popped++
		}
	})
	for p := range 3 {
		wg.Go(func() {
			for i := range 200 {
				x := o(fmt.Sprint(p, "-", i%10), strconv.Itoa(i))
				switch i % 4 {
				case 0:
					assert.NoError(t, f.Add(x))
				case 1:
					assert.NoError(t, f.Update(x))
				case 2:
					assert.NoError(t, f.Delete(x))
				case 3:
					assert.NoError(t, f.Resync())
				}
			}
		})
		wg.Go(func() {
			for range 200 {
				f.ListKeys()
				f.IsClosed()
				f.HasSynced()
				c.ListKeys()
			}
		})
	}
	wg.Go(func() { assert.NoError(t, f.Replace([]*obj{o("r", "1")}, "1")) })
	// Close while producers may still be running: Pop drains, then stops.
	f.Close()
	testwait.Group(t, &wg, "producers and Pop to stop after Close")
	assert.True(t, f.IsClosed())
	assert.Positive(t, popped+f.Len())
}
