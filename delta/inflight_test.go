package delta_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/delta"
	"github.com/listwatch/listwatch/indexer"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// boundedWait is how long a test waits for something that must happen
// promptly before declaring it stuck; it is a deadlock guard, not timing.
const boundedWait = 10 * time.Second

func newInformerFIFO() (*delta.FIFO[*obj], *indexer.Cache[*obj]) {
	c := indexer.New(key, nil)
	f := delta.NewFIFO(key)
	f.KnownObjects = c
	return f, c
}

func drain(t *testing.T, f *delta.FIFO[*obj], c *indexer.Cache[*obj]) {
	t.Helper()
	for f.Len() > 0 {
		_, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error { return apply(c, d) })
		require.NoError(t, err)
	}
}

func content(c *indexer.Cache[*obj]) map[string]string {
	out := map[string]string{}
	for _, x := range c.List() {
		out[x.ns+"/"+x.name] = x.v
	}
	return out
}

// conformance 40, decision 3: Pop releases the lock while process runs. A
// producer call racing a Pop must give the result it would give had the Pop
// finished first: the in-flight deltas count as applied. Each case holds
// process on a channel while the racing call runs, so the interleaving is
// fixed.
func TestProducersRacingAnInFlightPop(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *delta.FIFO[*obj]) // leaves the key to pop first in the queue
		race  func(f *delta.FIFO[*obj]) error
		// queued right after race, and the cache once everything is applied
		wantQueued map[string][]step
		wantFinal  map[string]string
	}{
		{
			name:       "Replace tombstones an in-flight add missing from the list",
			setup:      func(f *delta.FIFO[*obj]) { require.NoError(t, f.Add(o("a", "1"))) },
			race:       func(f *delta.FIFO[*obj]) error { return f.Replace(nil, "2") },
			wantQueued: map[string][]step{"ns/a": {{delta.Deleted, "ns/a", "1", true}}},
			wantFinal:  map[string]string{},
		},
		{
			name:       "Replace listing the in-flight key emits only Replaced",
			setup:      func(f *delta.FIFO[*obj]) { require.NoError(t, f.Add(o("a", "1"))) },
			race:       func(f *delta.FIFO[*obj]) error { return f.Replace([]*obj{o("a", "3")}, "2") },
			wantQueued: map[string][]step{"ns/a": {{delta.Replaced, "ns/a", "3", false}}},
			wantFinal:  map[string]string{"ns/a": "3"},
		},
		{
			name: "Replace does not tombstone an in-flight delete still in the cache",
			setup: func(f *delta.FIFO[*obj]) {
				require.NoError(t, f.Delete(o("a", "2")))
			},
			race:       func(f *delta.FIFO[*obj]) error { return f.Replace([]*obj{o("b", "1")}, "2") },
			wantQueued: map[string][]step{"ns/b": {{delta.Replaced, "ns/b", "1", false}}},
			wantFinal:  map[string]string{"ns/b": "1"},
		},
		{
			name: "Replace tombstones newer queued deltas with their newest object",
			setup: func(f *delta.FIFO[*obj]) {
				require.NoError(t, f.Add(o("b", "1")))
			},
			race: func(f *delta.FIFO[*obj]) error {
				if err := f.Update(o("b", "2")); err != nil {
					return err
				}
				return f.Replace(nil, "2")
			},
			wantQueued: map[string][]step{
				"ns/a": {{delta.Deleted, "ns/a", "0", true}},
				"ns/b": {{delta.Updated, "ns/b", "2", false}, {delta.Deleted, "ns/b", "2", true}},
			},
			wantFinal: map[string]string{},
		},
		{
			name:       "Delete of an in-flight add is kept",
			setup:      func(f *delta.FIFO[*obj]) { require.NoError(t, f.Add(o("b", "1"))) },
			race:       func(f *delta.FIFO[*obj]) error { return f.Delete(o("b", "1")) },
			wantQueued: map[string][]step{"ns/b": {{delta.Deleted, "ns/b", "1", false}}},
			wantFinal:  map[string]string{"ns/a": "0"},
		},
		{
			name:       "Delete of an in-flight delete is dropped",
			setup:      func(f *delta.FIFO[*obj]) { require.NoError(t, f.Delete(o("a", "1"))) },
			race:       func(f *delta.FIFO[*obj]) error { return f.Delete(o("a", "2")) },
			wantQueued: map[string][]step{},
			wantFinal:  map[string]string{},
		},
		{
			name:  "Resync syncs the in-flight object, not the stale cached one",
			setup: func(f *delta.FIFO[*obj]) { require.NoError(t, f.Update(o("a", "2"))) },
			race:  func(f *delta.FIFO[*obj]) error { return f.Resync() },
			wantQueued: map[string][]step{
				"ns/a": {{delta.Sync, "ns/a", "2", false}},
			},
			wantFinal: map[string]string{"ns/a": "2"},
		},
		{
			name:       "Resync skips an in-flight delete",
			setup:      func(f *delta.FIFO[*obj]) { require.NoError(t, f.Delete(o("a", "1"))) },
			race:       func(f *delta.FIFO[*obj]) error { return f.Resync() },
			wantQueued: map[string][]step{},
			wantFinal:  map[string]string{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, c := newInformerFIFO()
			// The cache starts with ns/a at version 0, applied through the FIFO.
			require.NoError(t, f.Replace([]*obj{o("a", "0")}, "1"))
			drain(t, f, c)
			tc.setup(f)

			started := make(chan struct{})
			release := make(chan struct{})
			popped := make(chan error)
			go func() {
				_, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error {
					close(started)
					<-release
					return apply(c, d)
				})
				popped <- err
			}()
			testwait.Recv(t, started, "Pop to call its handler")

			raced := make(chan error)
			go func() { raced <- tc.race(f) }()
			select {
			case err := <-raced:
				require.NoError(t, err)
			case <-time.After(boundedWait):
				close(release)
				testwait.Recv(t, popped, "Pop to return once released")
				t.Fatal("producer blocked behind an in-flight Pop")
			}
			assert.Equal(t, tc.wantQueued, queued(t, f))

			close(release)
			require.NoError(t, testwait.Recv(t, popped, "Pop to return once released"))
			drain(t, f, c)
			assert.Equal(t, tc.wantFinal, content(c))
		})
	}
}

// Without in-flight tracking the first case above would leave ns/a in the
// cache forever: this is the same race driven through the public API and
// checked on the cache alone.
func TestRelistDuringSlowHandlerLeavesNoGhost(t *testing.T) {
	f, c := newInformerFIFO()
	require.NoError(t, f.Add(o("ghost", "1")))
	started, release, popped := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		_, err := f.Pop(func(d delta.Deltas[*obj], _ bool) error {
			close(started)
			<-release
			return apply(c, d)
		})
		popped <- err
	}()
	testwait.Recv(t, started, "Pop to call its handler")
	require.NoError(t, f.Replace([]*obj{o("real", "1")}, "5"))
	close(release)
	require.NoError(t, testwait.Recv(t, popped, "Pop to return once released"))
	drain(t, f, c)
	assert.Equal(t, map[string]string{"ns/real": "1"}, content(c))
}
