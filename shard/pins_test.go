package shard

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/raw"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// The exact key → owner mapping is part of the protocol: during a rolling
// upgrade replicas of two versions must compute the same owner from the
// same members, or a key is processed twice. Any change to the hash fails
// here. Decision 18.
func TestOwnerGolden(t *testing.T) {
	for _, tc := range []struct {
		members []string
		owners  map[string]string
	}{
		{[]string{"a", "b", "c"}, map[string]string{
			"ns/a": "a", "ns/b": "c", "default/web": "a", "kube-system/coredns": "a",
			"ns/key-00": "c", "ns/key-01": "c", "ns/key-02": "c", "ns/key-03": "a",
			"cluster-scoped": "c", "": "b",
		}},
		{[]string{"replica-0", "replica-1", "replica-2", "replica-3"}, map[string]string{
			"ns/a": "replica-1", "ns/b": "replica-1", "default/web": "replica-1", "kube-system/coredns": "replica-0",
			"ns/key-00": "replica-0", "ns/key-01": "replica-2", "ns/key-02": "replica-3", "ns/key-03": "replica-3",
			"cluster-scoped": "replica-3", "": "replica-3",
		}},
	} {
		for key, owner := range tc.owners {
			assert.Equal(t, owner, Owner(key, tc.members), "%q among %v", key, tc.members)
		}
	}
	// Ten thousand keys among five members, as one digest of their owners.
	h := sha256.New()
	members := []string{"replica-0", "replica-1", "replica-2", "replica-3", "replica-4"}
	for i := range 10000 {
		fmt.Fprintf(h, "%s\n", Owner(fmt.Sprintf("ns-%d/obj-%d", i%7, i), members))
	}
	assert.Equal(t, "68d048c36cf2d20311bea41480f3a241b350a69b7f3464be2ca5192f14314ec8", fmt.Sprintf("%x", h.Sum(nil)))
}

// Members whose names hash alike score every key alike; the key then goes
// to the smaller name whatever the order of members, so that every replica
// picks the same owner. The two names are an FNV-1a collision, found by a
// collision search over 13-letter names (about 4·10⁹ hashes). Decision 18.
func TestOwnerTieGoesToSmallerName(t *testing.T) {
	const lo, hi = "tp52bfd7becde", "ut35qehydyjca"
	require.Equal(t, hash(lo), hash(hi), "the names must tie")
	for _, members := range [][]string{{lo, hi}, {hi, lo}} {
		for _, key := range []string{"ns/a", "ns/key-00", "default/web", ""} {
			assert.Equal(t, lo, Owner(key, members), "%q among %v", key, members)
		}
	}
}

// holderAndRenewal reads id's lease as the server holds it.
func (h *harness) holderAndRenewal(id string) (string, time.Time) {
	rec := lease.RecordOf(h.Lease("g-" + id))
	return rec.HolderIdentity, rec.RenewTime
}

// A member stopped while its workers hold keys keeps its lease (the others
// must not take those keys) until the workers release them, then gives it
// up; if they still hold keys RenewDeadline after its last renewal, Run
// returns "keys still held" and leaves the lease to expire. Decision 18.
func TestStopWaitsForHeldKeys(t *testing.T) {
	t.Run("released in time", func(t *testing.T) {
		h := newHarness(t)
		a := h.add("a", nil)
		h.Step(4*testRetry, testRetry)
		require.Equal(t, h.want("a"), h.holders())
		_, lastRenew := h.holderAndRenewal("a")
		a.pauseWork()
		a.Stop()
		h.Clock.Set(lastRenew.Add(testRenew - time.Second))
		a.unpause() // the workers let go just before the deadline
		testwait.Recv(t, a.Done, "a to stop")
		require.NoError(t, a.Err)
		holder, released := h.holderAndRenewal("a")
		assert.Empty(t, holder, "released")
		assert.Equal(t, lastRenew.Add(testRenew-time.Second), released, "kept until the keys were released")
	})
	t.Run("held past the deadline", func(t *testing.T) {
		h := newHarness(t)
		a := h.add("a", nil)
		h.Step(4*testRetry, testRetry)
		_, lastRenew := h.holderAndRenewal("a")
		a.pauseWork()
		a.Stop()
		h.Clock.Set(lastRenew.Add(testRenew))
		testwait.Recv(t, a.Done, "a to give up at its renew deadline")
		require.ErrorContains(t, a.Err, fmt.Sprintf("%d keys still held at the renew deadline; lease g-a left to expire", testKeys))
		holder, renewed := h.holderAndRenewal("a")
		assert.Equal(t, "a", holder, "left to expire, not released")
		assert.Equal(t, lastRenew, renewed)
	})
}

// events is a Watcher that replays its events, then io.EOF.
type events []httpwatch.Event

func (e *events) Next() (httpwatch.Event, error) {
	if len(*e) == 0 {
		return httpwatch.Event{}, io.EOF
	}
	ev := (*e)[0]
	*e = (*e)[1:]
	return ev, nil
}

func (e *events) Stop() {}

// NotifyRead never calls fn: Next never waits, it ends with io.EOF.
func (e *events) NotifyRead(func()) {}

type eventSource struct{ w httpwatch.Watcher }

func (s eventSource) Info() httpwatch.SourceInfo {
	return httpwatch.SourceInfo{Resource: httpwatch.Resource{Version: "v1", Resource: "pods"}}
}

func (s eventSource) ListPage(context.Context, httpwatch.ListOptions) (*httpwatch.Page, error) {
	return &httpwatch.Page{}, nil
}

func (s eventSource) Watch(context.Context, httpwatch.ListOptions) (httpwatch.Watcher, error) {
	return s.w, nil
}

// Source's watches skip every event of another member's object, deletions
// included (a deletion passed on would reach handlers for an object the
// cache never held), and pass bookmarks. Decision 18.
func TestSourceSkipsOtherMembersEvents(t *testing.T) {
	m := &Member{cfg: Config{Identity: "a"}, view: []string{"a", "b"}}
	obj := func(name string) *raw.Object {
		o, err := raw.NewObject([]byte(fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","resourceVersion":"7"}}`, name)))
		require.NoError(t, err)
		return o
	}
	var mine, theirs string
	for i := 0; mine == "" || theirs == ""; i++ {
		name := fmt.Sprintf("cm-%d", i)
		if Owner("ns/"+name, m.view) == "a" {
			mine = name
		} else {
			theirs = name
		}
	}
	var in events
	for _, typ := range []httpwatch.EventType{httpwatch.Added, httpwatch.Modified, httpwatch.Deleted} {
		in = append(in, httpwatch.Event{Type: typ, Object: obj(theirs)}, httpwatch.Event{Type: typ, Object: obj(mine)})
	}
	in = append(in, httpwatch.Event{Type: httpwatch.Bookmark, Object: obj("")})
	w, err := m.Source(eventSource{&in}).Watch(context.Background(), httpwatch.ListOptions{})
	require.NoError(t, err)
	var got []string
	for {
		e, err := w.Next()
		if err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		got = append(got, fmt.Sprintf("%s %s", e.Type, e.Object.Name()))
	}
	assert.Equal(t, []string{"ADDED " + mine, "MODIFIED " + mine, "DELETED " + mine, "BOOKMARK "}, got)
}
