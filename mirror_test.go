package listwatch

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// mirrorLog records what a Mirror is handed.
type mirrorLog struct {
	mu    sync.Mutex
	calls []string
	more  chan struct{}
}

func (m *mirrorLog) add(s string) error {
	m.mu.Lock()
	m.calls = append(m.calls, s)
	m.mu.Unlock()
	select {
	case m.more <- struct{}{}:
	default:
	}
	return nil
}

func (m *mirrorLog) Add(o *Object) error { return m.add("add " + Key(o) + " " + o.ResourceVersion()) }
func (m *mirrorLog) Update(o *Object) error {
	return m.add("update " + Key(o) + " " + o.ResourceVersion())
}
func (m *mirrorLog) Delete(o *Object) error {
	return m.add("delete " + Key(o) + " " + o.ResourceVersion())
}
func (m *mirrorLog) Resync() error { return nil }
func (m *mirrorLog) Replace(items []*Object, rv string) error {
	return m.add(fmt.Sprintf("replace %d %s", len(items), rv))
}
func (m *mirrorLog) Progress(rv string) { _ = m.add("progress " + rv) }

func (m *mirrorLog) waitFor(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		m.mu.Lock()
		got := append([]string(nil), m.calls...)
		m.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-m.more:
		case <-deadline:
			t.Fatalf("mirror saw %q, want %d calls", got, n)
		}
	}
}

// TestMirrorSeesTheServersOrder is decision 43: an informer's Mirror is
// handed the list, every event in the server's order (across keys, where
// the queue merges a key's changes) and every bookmark's version, while
// the cache and its handlers still get everything.
func TestMirrorSeesTheServersOrder(t *testing.T) {
	up := watchtest.NewServer()
	defer up.Close()
	_, err := up.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: up.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	inf := NewInformer(client.Resource(watchtest.Pods), 0)
	m := &mirrorLog{more: make(chan struct{}, 1)}
	inf.Mirror = m
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { cancel(); <-done }()
	require.NoError(t, inf.Wait(ctx))
	start := up.ResourceVersion()
	require.NoError(t, up.WaitForWatches(ctx, 1))

	_, err = up.Create(watchtest.Pods, `{"metadata":{"name":"b","namespace":"ns"}}`)
	require.NoError(t, err)
	_, err = up.Update(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns","labels":{"x":"1"}}}`)
	require.NoError(t, err)
	_, err = up.Update(watchtest.Pods, `{"metadata":{"name":"b","namespace":"ns","labels":{"x":"1"}}}`)
	require.NoError(t, err)
	_, err = up.Delete(watchtest.Pods, "ns", "a")
	require.NoError(t, err)
	up.SendBookmarks()
	rv := func(d int) string {
		var n int
		fmt.Sscan(start, &n)
		return fmt.Sprint(n + d)
	}
	require.Equal(t, []string{
		"replace 1 " + start,
		"add ns/b " + rv(1), "update ns/a " + rv(2), "update ns/b " + rv(3), "delete ns/a " + rv(4),
		"progress " + rv(4),
	}, m.waitFor(t, 6))
	require.Eventually(t, func() bool { return inf.Indexer().Len() == 1 }, 10*time.Second, time.Millisecond,
		"the cache still gets every change")
}
