package reflector

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/watchtest"
)

// flushSink is a recordSink that holds work back until Flush.
type flushSink struct{ recordSink }

func (s *flushSink) Flush() { _ = s.add("flush") }

// checkFlushed fails unless every write in log is followed by a flush,
// before the next write if each says so: nothing a Flusher holds back
// waits while the reflector does.
func checkFlushed(log []string, each bool) error {
	held := ""
	for _, line := range log {
		switch {
		case line == "flush":
			held = ""
		case held != "" && each:
			return fmt.Errorf("%q came before a flush of %q: %q", line, held, log)
		default:
			held = line
		}
	}
	if held != "" {
		return fmt.Errorf("%q is never flushed: %q", held, log)
	}
	return nil
}

// Flusher: the Sink is flushed before the reflector may wait: after a
// list's Replace, when the watcher says it is about to wait for a read
// (NotifyRead; the three scripted events are one read, so they are handed
// on together), and with a resync period, when a read-ahead feed's loop
// waits for its reader (decision 33).
func TestFlushBeforeEveryWait(t *testing.T) {
	for _, resync := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprint("resync=", resync), func(t *testing.T) {
			w := newWatcher(ev(httpwatch.Added, obj("b", "11")), ev(httpwatch.Modified, obj("b", "12")), ev(httpwatch.Deleted, obj("b", "13")))
			src := &scriptSource{
				pages:   []func(httpwatch.ListOptions) (*httpwatch.Page, error){page("10", "", obj("a", "9"))},
				watches: []func(httpwatch.ListOptions) (httpwatch.Watcher, error){watchOf(w)},
			}
			sink := &flushSink{}
			r := New(src, sink)
			r.PagedList = true
			r.Clock = clock.NewFake(time.Unix(1000, 0))
			r.ResyncPeriod = resync
			runPolicyReflector(t, r)
			// The stream's end may be read before or after the loop's wait
			// for more, so the last event is followed by one flush or two.
			require.Eventually(t, func() bool {
				log := sink.log()
				last := len(log) - 1
				for last >= 0 && log[last] == "flush" {
					last--
				}
				return last >= 0 && last < len(log)-1 && strings.HasPrefix(log[last], "delete")
			}, 10*time.Second, time.Millisecond, "the last event flushed")
			log := sink.log()
			// A read-ahead feed hands the loop what it read in one go: the
			// loop flushes only once it has nothing left.
			require.NoError(t, checkFlushed(log, false))
			assert.Equal(t, []string{"replace 1@10", "flush"}, log[:2])
			if resync == 0 {
				assert.NotContains(t, log[2:5], "flush", "one read, one flush: %q", log)
			}
		})
	}
}

// Flusher over HTTP: a ResourceClient's watcher announces its reads
// (httpwatch.Watcher.NotifyRead), and the reflector flushes then, so every event
// is handed on before the watch waits for the next (decision 33).
func TestFlushBeforeTheWatchReads(t *testing.T) {
	s := serveOnePod(t)
	c := newTestClient(t, s.URL)
	sink := &flushSink{}
	r := New(c.Resource(pods), sink)
	r.PagedList = true
	runPolicyReflector(t, r)
	require.NoError(t, s.WaitForWatches(policyCtx(t), 1))

	for i := range 3 {
		_, err := s.Update(watchtest.Pods, fmt.Sprintf(`{"metadata":{"name":"a","namespace":"ns","labels":{"v":"%d"}}}`, i))
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			log := sink.log()
			return len(log) >= 2 && log[len(log)-1] == "flush" && strings.HasPrefix(log[len(log)-2], "update")
		}, 10*time.Second, time.Millisecond, "update %d flushed before the watch waits again", i)
	}
	require.NoError(t, checkFlushed(sink.log(), false))
}

// A sink that holds nothing back is never asked to flush.
func TestNoFlushWithoutFlusher(t *testing.T) {
	r := New(&scriptSource{}, &recordSink{})
	assert.Nil(t, r.flusher())
	r.flush() // no Flush to call
	w := newWatcher()
	f := newFeed(context.Background(), func() {}, w, true, nil, nil)
	assert.Nil(t, w.beforeWait, "nothing to call before a read")
	f.close()
}
