package shard

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// An informer on Member.Source caches only the member's keys, from lists
// and watches; after a ring change and Relist, keys gained arrive as adds,
// keys lost leave as deletes with finalStateUnknown, and kept keys are not
// notified again.
func TestSourceFiltersAndRelistMovesKeys(t *testing.T) {
	srv := watchtest.NewServer()
	defer srv.Close()
	var keys []string
	for i := range 40 {
		name := fmt.Sprintf("cm-%02d", i)
		_, err := srv.Create(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"}}`, name))
		require.NoError(t, err)
		keys = append(keys, "ns/"+name)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, QPS: -1})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	m, err := New(Config{Leases: client.Resource(leasetest.Resource), Group: "g", Identity: "a"})
	require.NoError(t, err)
	m.view = []string{"a", "b"}

	var mu sync.Mutex
	var events []string
	note := func(kind string) func(o *listwatch.Object) {
		return func(o *listwatch.Object) {
			mu.Lock()
			defer mu.Unlock()
			events = append(events, kind+" "+listwatch.Key(o))
		}
	}
	inf := listwatch.NewInformer(m.Source(client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"})), 0)
	_, err = inf.AddEventHandler(listwatch.HandlerFuncs{
		AddFunc:    func(o *listwatch.Object, _ bool) { note("add")(o) },
		UpdateFunc: func(_, o *listwatch.Object) { note("update")(o) },
		DeleteFunc: func(o *listwatch.Object, unknown bool) { note(fmt.Sprint("delete ", unknown))(o) },
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "the informer to stop") }()
	require.NoError(t, inf.Wait(testwait.Context(t)))

	owned := func(members ...string) []string {
		var out []string
		for _, k := range keys {
			if Owner(k, members) == "a" {
				out = append(out, k)
			}
		}
		return out
	}
	cached := func() []string { ks := inf.Indexer().ListKeys(); sort.Strings(ks); return ks }
	assert.Equal(t, owned("a", "b"), cached())

	// Watch events of other members' keys are skipped.
	for _, k := range keys {
		_, err := srv.Update(watchtest.ConfigMaps, fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns"},"data":{"v":"2"}}`, k[3:]))
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) == 2*len(owned("a", "b"))
	}, 10*time.Second, time.Millisecond)
	// An event of another member's key would have counted above: none is there.
	mu.Lock()
	for _, e := range events {
		key := e[strings.LastIndex(e, " ")+1:]
		assert.Equal(t, "a", Owner(key, []string{"a", "b"}), e)
	}
	mu.Unlock()

	// a gains b's keys and loses some to c.
	mu.Lock()
	events = nil
	mu.Unlock()
	m.mu.Lock()
	m.view = []string{"a", "c"}
	m.mu.Unlock()
	inf.Relist()
	require.Eventually(t, func() bool { return assert.ObjectsAreEqual(owned("a", "c"), cached()) }, 10*time.Second, time.Millisecond)
	var want []string
	for _, k := range keys {
		was, is := Owner(k, []string{"a", "b"}) == "a", Owner(k, []string{"a", "c"}) == "a"
		switch {
		case was && !is:
			want = append(want, "delete true "+k)
		case !was && is:
			want = append(want, "add "+k)
		}
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(events) == len(want)
	}, 10*time.Second, time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.ElementsMatch(t, want, events)
}
