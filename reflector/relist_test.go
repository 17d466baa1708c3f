package reflector

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Relist ends the open watch and lists again at once, without an error
// or a backoff; the new list replaces what the sink holds. Stops stay
// exactly once.
func TestReflectorRelist(t *testing.T) {
	for _, resync := range []time.Duration{0, time.Hour} { // a direct watch, and one read ahead
		first, second := newWatcher(), newWatcher()
		src := &scriptSource{
			pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "10")), page("11", "", obj("b", "11"))},
			watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(first), watchOf(second)},
		}
		r, sink, _ := newTestReflector(src)
		r.ResyncPeriod = resync
		var errs []error
		r.OnError = func(err error) { errs = append(errs, err) }
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { r.Run(ctx); close(done) }()
		require.Eventually(t, func() bool { src.mu.Lock(); defer src.mu.Unlock(); return len(src.watchOpts) == 1 }, 10*time.Second, time.Millisecond)

		r.Relist()
		require.Eventually(t, func() bool { src.mu.Lock(); defer src.mu.Unlock(); return len(src.watchOpts) == 2 }, 10*time.Second, time.Millisecond,
			"resync %v: relisted and watching again", resync)
		assert.True(t, stopped(first), "the first watch is stopped")
		assert.False(t, stopped(second), "the new watch is not")
		cancel()
		testwait.Recv(t, done, "Run to return after cancel")
		assert.Equal(t, []string{"replace 1@10", "replace 1@11"}, slices.DeleteFunc(sink.log(), func(l string) bool { return l == "resync" }))
		assert.Empty(t, errs, "a relist is not an error")
		src.mu.Lock()
		assert.Len(t, src.listOpts, 2)
		src.mu.Unlock()
	}
}
