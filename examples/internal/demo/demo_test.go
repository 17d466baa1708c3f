package demo_test

import (
	"context"
	"fmt"
	"log"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/internal/demo"
	"github.com/listwatch/listwatch/watchtest"
)

// A Pod is served in the shape of a real pod: containers and their
// statuses, the restarts on the first, managedFields only with a Manager.
func TestPodShape(t *testing.T) {
	s, err := demo.NewServer(
		demo.Pod{Namespace: "shop", Name: "a", Node: "node-1", Phase: "Running", Labels: map[string]string{"app": "web"}, Containers: 2, Restarts: 3, Manager: "kubelet"},
		demo.Pod{Namespace: "shop", Name: "b"},
	)
	require.NoError(t, err)
	defer s.Close()

	a, err := s.Get(watchtest.Pods, "shop", "a")
	require.NoError(t, err)
	for path, want := range map[string]string{
		"metadata.labels":                         `{"app":"web"}`,
		"metadata.managedFields.0.manager":        `"kubelet"`,
		"spec.nodeName":                           `"node-1"`,
		"spec.containers.#.name":                  `["c0","c1"]`,
		"status.phase":                            `"Running"`,
		"status.containerStatuses.#.restartCount": `[3,0]`,
		"status.containerStatuses.#.ready":        `[true,true]`,
		"spec.containers.0.image":                 `"nginx:1.27"`,
	} {
		assert.JSONEq(t, want, a.Get(path).Raw, path)
	}

	b, err := s.Get(watchtest.Pods, "shop", "b")
	require.NoError(t, err)
	assert.False(t, b.Get("metadata.managedFields").Exists(), "no Manager, no managedFields")
	assert.False(t, b.Get("metadata.labels").Exists())
	assert.Equal(t, int64(1), b.Get("spec.containers.#").Int(), "a pod has at least one container")
}

func TestPodChanges(t *testing.T) {
	p := demo.Pod{Namespace: "shop", Name: "a", Phase: "Pending"}
	s, err := demo.NewServer(p)
	require.NoError(t, err)
	defer s.Close()

	p.Phase = "Running"
	require.NoError(t, s.UpdatePod(p))
	got, err := s.Get(watchtest.Pods, "shop", "a")
	require.NoError(t, err)
	assert.Equal(t, "Running", got.Get("status.phase").String())

	require.NoError(t, s.DeletePod("shop", "a"))
	assert.ErrorIs(t, s.DeletePod("shop", "a"), watchtest.ErrNotFound)
	assert.ErrorIs(t, s.UpdatePod(p), watchtest.ErrNotFound)
	require.NoError(t, s.CreatePod(p))
}

func TestNewServerRejectsDuplicates(t *testing.T) {
	p := demo.Pod{Namespace: "shop", Name: "a"}
	_, err := demo.NewServer(p, p)
	assert.ErrorIs(t, err, watchtest.ErrAlreadyExists)
	assert.ErrorContains(t, err, "demo server: ")
	// goleak in TestMain checks the half-built server was closed.
}

// Churn keeps changing the server, ignoring errors, until ctx is done;
// Close waits for it.
func TestChurn(t *testing.T) {
	s, err := demo.NewServer()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	calls := make(chan int, 10)
	n := 0
	s.Churn(ctx, time.Millisecond, func() error {
		n++
		calls <- n
		return s.DeletePod("shop", "missing") // fails every time; the churn goes on
	})
	for want := 1; want <= 3; want++ {
		select {
		case got := <-calls:
			assert.Equal(t, want, got)
		case <-time.After(30 * time.Second):
			t.Fatal("churn stopped")
		}
	}
	cancel()
	s.Close() // returns only once the churn has; goleak checks
}

func TestOnDemand(t *testing.T) {
	world := demo.OnDemand{Pods: []demo.Pod{{Namespace: "shop", Name: "a"}}}
	host, closeFn, err := world.Start(t.Context())
	require.NoError(t, err)
	defer closeFn()
	require.NotNil(t, world.Server)
	assert.Equal(t, world.Server.URL, host)
	assert.Len(t, world.Server.List(watchtest.Pods, ""), 1)
}

func TestPlace(t *testing.T) {
	for i, want := range []string{"shop node-1", "billing node-2", "search node-3", "shop node-1"} {
		ns, node := demo.Place(i)
		assert.Equal(t, want, ns+" "+node, i)
	}
}

func ExampleNewServer() {
	s, err := demo.NewServer(demo.Pod{Namespace: "shop", Name: "web-1", Phase: "Running", Manager: "kubelet"})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	pod, err := s.Get(watchtest.Pods, "shop", "web-1")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(pod.Get("status.phase"), pod.Get("metadata.managedFields.#"))
	// Output: Running 1
}
