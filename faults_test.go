package listwatch

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
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sequenceChecker is a handler that checks the sequence it is told is
// consistent: adds only for objects it does not hold, updates and deletes
// only for objects it holds, versions never going backwards.
type sequenceChecker struct {
	mu       sync.Mutex
	view     map[string]uint64
	problems []string
}

func (c *sequenceChecker) rv(o *Object) uint64 {
	v, _ := strconv.ParseUint(o.ResourceVersion(), 10, 64)
	return v
}

func (c *sequenceChecker) OnAdd(o *Object, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.view[Key(o)]; ok {
		c.problems = append(c.problems, "second add of "+Key(o))
	}
	c.view[Key(o)] = c.rv(o)
}

func (c *sequenceChecker) OnUpdate(old, o *Object) {
	c.mu.Lock()
	defer c.mu.Unlock()
	held, ok := c.view[Key(o)]
	switch {
	case !ok:
		c.problems = append(c.problems, "update of unknown "+Key(o))
	case c.rv(o) < held || c.rv(old) != held:
		c.problems = append(c.problems, fmt.Sprintf("update of %s from %d to %d while holding %d", Key(o), c.rv(old), c.rv(o), held))
	}
	c.view[Key(o)] = c.rv(o)
}

func (c *sequenceChecker) OnDelete(o *Object, _ bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.view[Key(o)]; !ok {
		c.problems = append(c.problems, "delete of unknown "+Key(o))
	}
	delete(c.view, Key(o))
}

func (c *sequenceChecker) state() map[string]string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]string{}
	for k, v := range c.view {
		out[k] = strconv.FormatUint(v, 10)
	}
	return out
}

// End to end on watchtest while faults fire: every handler sees a
// consistent sequence that ends equal to the server's state.
func TestInformerUnderFaults(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	client.RetryWaitMin, client.RetryWaitMax = time.Millisecond, 5*time.Millisecond

	inf := NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
	inf.Reflector.Backoff = reflector.Backoff{Initial: time.Millisecond, Cap: 10 * time.Millisecond, Factor: 2}
	checkers := []*sequenceChecker{{view: map[string]uint64{}}, {view: map[string]uint64{}}}
	for _, c := range checkers {
		_, err := inf.AddEventHandler(c)
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()

	rnd := rand.New(rand.NewPCG(3, 4))
	live := map[string]bool{}
	for i := range 3000 {
		name := fmt.Sprintf("p%02d", rnd.IntN(60))
		pod := fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":{"step":"%d"}}}`, name, i)
		switch {
		case !live[name]:
			_, err = s.Create(watchtest.Pods, pod)
			live[name] = true
		case rnd.IntN(4) == 0:
			_, err = s.Delete(watchtest.Pods, "ns", name)
			delete(live, name)
		default:
			_, err = s.Update(watchtest.Pods, pod)
		}
		require.NoError(t, err)
		if rnd.IntN(100) == 0 {
			switch rnd.IntN(5) {
			case 0:
				s.CutNextWatchAfterBytes(1 + rnd.IntN(500))
			case 1:
				s.FailNext(watchtest.Failure{Code: http.StatusGone, Reason: "Expired", InStream: true, Verbs: []string{"watch"}})
			case 2:
				s.FailNext(watchtest.Failure{Code: http.StatusInternalServerError, Times: 2})
			case 3:
				require.NoError(t, s.Compact(s.ResourceVersion()))
			case 4:
				s.CloseClientConnections()
			}
		}
	}
	want := map[string]string{}
	for _, o := range s.List(watchtest.Pods, "") {
		want[Key(o)] = o.ResourceVersion()
	}
	for _, c := range checkers {
		require.Eventually(t, func() bool { return fmt.Sprint(c.state()) == fmt.Sprint(want) }, 30*time.Second, 5*time.Millisecond)
		c.mu.Lock()
		assert.Empty(t, c.problems)
		c.mu.Unlock()
	}
	assert.Equal(t, fmt.Sprint(want), fmt.Sprint(cacheView(inf)))
}
