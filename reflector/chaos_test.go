package reflector_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// modelSink is a Sink that keeps key → object and remembers any object whose
// resourceVersion went backwards.
type modelSink struct {
	mu       sync.Mutex
	objs     map[string]*raw.Object
	seen     map[string]uint64 // highest version received per key
	backward []string
}

func newModelSink() *modelSink {
	return &modelSink{objs: map[string]*raw.Object{}, seen: map[string]uint64{}}
}

func key(o *raw.Object) string { return o.Namespace() + "/" + o.Name() }

func (s *modelSink) note(o *raw.Object) {
	rv, _ := strconv.ParseUint(o.ResourceVersion(), 10, 64)
	if rv < s.seen[key(o)] {
		s.backward = append(s.backward, fmt.Sprintf("%s: %d after %d", key(o), rv, s.seen[key(o)]))
	}
	s.seen[key(o)] = rv
}

func (s *modelSink) Add(o *raw.Object) error { return s.Update(o) }

func (s *modelSink) Update(o *raw.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note(o)
	s.objs[key(o)] = o
	return nil
}

func (s *modelSink) Delete(o *raw.Object) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.note(o)
	delete(s.objs, key(o))
	return nil
}

func (s *modelSink) Replace(items []*raw.Object, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs = map[string]*raw.Object{}
	for _, o := range items {
		s.note(o)
		s.objs[key(o)] = o
	}
	return nil
}

func (s *modelSink) Resync() error { return nil }

func (s *modelSink) state() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]string{}
	for k, o := range s.objs {
		out[k] = o.ResourceVersion()
	}
	return out
}

func serverState(t *testing.T, s *watchtest.Server) map[string]string {
	out := map[string]string{}
	for _, o := range s.List(watchtest.Pods, "") {
		out[key(o)] = o.ResourceVersion()
	}
	return out
}

// conformance 12 13 20 21 22 23: 10,000 random changes while faults fire
// at random (streams cut mid-frame, 410s in both forms, 5xx, 429,
// compaction, restarts). In the end the sink holds exactly the server's
// objects at their latest versions, and no version it received ever went
// backwards. Seeded and reproducible.
func TestReflectorChaos(t *testing.T) {
	for _, watchList := range []bool{false, true} {
		t.Run(fmt.Sprintf("watchList=%v", watchList), func(t *testing.T) {
			rnd := rand.New(rand.NewPCG(7, uint64(map[bool]int{false: 1, true: 2}[watchList])))
			s := watchtest.NewUnstartedServer()
			s.ExpiredWatchAsStatus = false
			s.Start()
			defer s.Close()

			c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
			require.NoError(t, err)
			defer c.CloseIdleConnections()
			c.RetryWaitMin, c.RetryWaitMax = time.Millisecond, 5*time.Millisecond
			sink := newModelSink()
			r := reflector.New(c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), sink)
			r.PagedList = !watchList
			r.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: 20 * time.Millisecond, Factor: 2}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { r.Run(ctx); close(done) }()
			defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

			live := map[string]bool{}
			names := make([]string, 200)
			for i := range names {
				names[i] = fmt.Sprintf("p%03d", i)
			}
			faults := 0
			for i := range 10000 {
				name := names[rnd.IntN(len(names))]
				ns := []string{"a", "b"}[rnd.IntN(2)]
				k := ns + "/" + name
				pod := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":%q,"labels":{"step":"%d"}}}`, name, ns, i)
				switch {
				case !live[k]:
					_, err = s.Create(watchtest.Pods, pod)
					live[k] = true
				case rnd.IntN(4) == 0:
					_, err = s.Delete(watchtest.Pods, ns, name)
					delete(live, k)
				default:
					_, err = s.Update(watchtest.Pods, pod)
				}
				require.NoError(t, err)
				if rnd.IntN(150) != 0 {
					continue
				}
				faults++
				switch rnd.IntN(8) {
				case 0:
					s.CutNextWatchAfterBytes(1 + rnd.IntN(3000))
				case 1:
					s.CutNextWatchAfterEvents(rnd.IntN(20))
				case 2:
					s.FailNext(watchtest.Failure{Code: http.StatusGone, Reason: "Expired", InStream: true, Verbs: []string{"watch"}})
				case 3:
					s.FailNext(watchtest.Failure{Code: http.StatusServiceUnavailable, Times: 1 + rnd.IntN(3)})
				case 4:
					s.FailNext(watchtest.Failure{Code: http.StatusTooManyRequests, Times: 1})
				case 5:
					require.NoError(t, s.Compact(s.ResourceVersion()))
				case 6:
					s.CloseWatches()
				case 7:
					s.CloseClientConnections()
				}
			}
			want := serverState(t, s)
			require.Eventually(t, func() bool {
				return fmt.Sprint(sink.state()) == fmt.Sprint(want)
			}, 30*time.Second, 5*time.Millisecond, "the sink never converged to the server's %d objects", len(want))
			sink.mu.Lock()
			require.Empty(t, sink.backward, "versions went backwards")
			sink.mu.Unlock()
			t.Logf("%d faults; reflector stats %+v", faults, r.Stats())
		})
	}
}
