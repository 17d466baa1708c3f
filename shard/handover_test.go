package shard

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/leasetest"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Three members starting at once settle on one ring: every key is processed
// by its rendezvous owner and nobody else, and each has published the set.
func TestThreeMembersSplitKeys(t *testing.T) {
	h := newHarness(t)
	var ns []*node
	for _, id := range []string{"a", "b", "c"} {
		ns = append(ns, h.add(id, nil))
	}
	h.Step(5*testRetry, testRetry)
	want := h.want("a", "b", "c")
	assert.Equal(t, want, h.holders())
	for _, n := range ns {
		assert.Equal(t, []string{"a", "b", "c"}, n.m.Members())
		assert.Equal(t, []string{"a", "b", "c"}, n.m.acked)
	}
	counts := map[string]int{}
	for _, id := range want {
		counts[id]++
	}
	for id, c := range counts {
		assert.Greater(t, c, testKeys/6, "%s owns a fair share", id)
	}
	settled := len(h.grants)
	h.Step(time.Minute, testRetry)
	assert.Len(t, h.grants, settled, "a stable ring never moves a key")
	assert.Empty(t, h.Log.Lines(slog.LevelInfo), "healthy members log nothing above Debug (decision 25)")
}

// A member joining takes the keys rendezvous hashing gives it, each only
// after the member losing it let go, within two rounds; no other key moves.
// Decision 18.
func TestJoinMovesKeysAfterLoserLetsGo(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.add("b", nil)
	h.Step(4*testRetry, testRetry)
	require.Equal(t, h.want("a", "b"), h.holders())
	before := len(h.grants)
	joined := h.Clock.Now()
	h.add("c", nil)
	h.Step(3*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b", "c"), h.holders())
	moved := 0
	for key, id := range h.want("a", "b", "c") {
		if id != "c" {
			continue
		}
		moved++
		at, ok := h.firstGrant("c", key, joined)
		require.True(t, ok, key)
		assert.LessOrEqual(t, at.Sub(joined), 2*testRetry, "%s moved within two rounds", key)
	}
	assert.Len(t, h.grants, before+moved, "only the keys c gained changed hands")
}

// A member that leaves (its context ends) lets go of its keys and gives
// its lease up: the others take its keys at their next round.
func TestLeaveHandsOverWithinARound(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.add("b", nil)
	c := h.add("c", nil)
	h.Step(4*testRetry, testRetry)
	left := h.Clock.Now()
	c.Stop()
	h.Settle()
	testwait.Recv(t, c.Done, "c to stop")
	require.NoError(t, c.Err)
	h.Step(testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b"), h.holders())
	for key, id := range h.want("a", "b", "c") {
		if id == "c" {
			at, ok := h.firstGrant(Owner(key, []string{"a", "b"}), key, left)
			require.True(t, ok, key)
			assert.LessOrEqual(t, at.Sub(left), testRetry)
		}
	}
}

// A member that dies (SIGKILL: nothing of it reaches the server any more)
// keeps its keys until its lease expires by the others' observation: they
// move no earlier than LeaseDuration and no later than LeaseDuration +
// RetryPeriod after its last renewal.
// Decision 18.
func TestDeadMemberKeysMoveWithinBound(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.add("b", nil)
	c := h.add("c", nil)
	h.Step(4*testRetry+testRetry/2, testRetry/2)
	lastRenew := h.renewTime("c")
	c.kill()
	h.Step(testLease+2*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b"), h.holders())
	for key, id := range h.want("a", "b", "c") {
		if id != "c" {
			continue
		}
		at, ok := h.firstGrant(Owner(key, []string{"a", "b"}), key, lastRenew)
		require.True(t, ok, key)
		assert.False(t, at.Before(lastRenew.Add(testLease)), "%s moved at %v, before c's lease expired", key, at.Sub(lastRenew))
		assert.LessOrEqual(t, at.Sub(lastRenew), testLease+testRetry, "%s moved within LeaseDuration + RetryPeriod", key)
	}
}

// A member busy on a key when the ring changes (a reconcile that takes
// long) keeps it: the gainer does not start on it, nor on any key the busy
// member loses, until the busy member has finished and published its
// acknowledgement; then the gainer starts within a round.
// Decision 18.
func TestPausedReconcileHoldsHandover(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.add("b", nil)
	h.Step(4*testRetry, testRetry)
	require.Equal(t, h.want("a", "b"), h.holders())
	a.pauseWork()
	joined := h.Clock.Now()
	h.add("c", nil)
	h.Step(5*testRetry, testRetry/4)
	var lost []string
	for key, id := range h.want("a", "b", "c") {
		if id == "c" && Owner(key, []string{"a", "b"}) == "a" {
			lost = append(lost, key)
			assert.Equal(t, "a", h.holders()[key], "%s stays with busy a", key)
		}
	}
	require.NotEmpty(t, lost)
	assert.Equal(t, []string{"a", "b", "c"}, a.m.Members(), "a sees c")
	assert.Equal(t, []string{"a", "b"}, a.m.acked, "but cannot acknowledge it yet")

	finished := h.Clock.Now()
	a.unpause()
	h.Settle()
	h.Step(testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b", "c"), h.holders())
	for _, key := range lost {
		at, ok := h.firstGrant("c", key, joined)
		require.True(t, ok, key)
		assert.False(t, at.Before(finished), "%s started by c before a finished", key)
		assert.LessOrEqual(t, at.Sub(finished), testRetry)
	}
}

// A whole process paused mid-reconcile (SIGSTOP: its requests hang, its
// workers are stuck on their keys) loses its keys when its lease expires
// by the others' observation, no earlier: between LeaseDuration and
// LeaseDuration + RetryPeriod after its last renewal. By then (at
// RenewDeadline) the contexts of its reconciles were cancelled with
// ErrOverdue, so when it resumes, the work it was on knows to stop; it
// re-joins and gets its keys back only after the others let go.
// Decision 18.
func TestFrozenMemberKeysMoveAfterExpiry(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.add("b", nil)
	c := h.add("c", nil)
	h.Step(4*testRetry+testRetry/2, testRetry/2)
	lastRenew := h.renewTime("c")
	c.freeze()
	h.Step(testLease+2*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b"), h.holders())
	for key, id := range h.want("a", "b", "c") {
		if id != "c" {
			continue
		}
		at, ok := h.firstGrant(Owner(key, []string{"a", "b"}), key, lastRenew)
		require.True(t, ok, key)
		assert.False(t, at.Before(lastRenew.Add(testLease)), "%s moved at %v, before c's lease expired", key, at.Sub(lastRenew))
		assert.LessOrEqual(t, at.Sub(lastRenew), testLease+testRetry)
	}

	c.thaw()
	h.Settle()
	for key, id := range h.want("a", "b", "c") {
		if id == "c" {
			c.mu.Lock()
			assert.ErrorIs(t, c.workers[key].kerr, ErrOverdue, key)
			c.mu.Unlock()
		}
	}
	h.Step(4*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b", "c"), h.holders())
}

// A renewal whose reply is lost may still have been written: the server
// then shows a set the member does not believe it published. Here a's
// acknowledgement of c ({a,b,c}, giving up the keys c wins) is written but
// a sees an error; c leaves, so a's view is {a,b} again, and c comes back
// at once (a restarted pod). While a cannot tell which set the others
// read, it must not take back the keys it gave up: c, reading {a,b,c} in
// a's lease, takes them.
// Decision 18.
func TestLostReplyDoesNotHandKeysTwice(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.add("b", nil)
	h.Step(4*testRetry, testRetry)
	require.Equal(t, h.want("a", "b"), h.holders())

	contestedKeys(t, h) // the scenario needs keys a must give up to c

	a.part.SetLoseReplies(true)
	c := h.add("c", nil)
	h.Settle()
	h.Step(testRetry, testRetry/4) // a sees c, gives its keys up, "fails" to publish
	c.Stop()
	h.Settle()
	testwait.Recv(t, c.Done, "c to stop")
	require.NoError(t, c.Err)
	// a sees c gone: its view is {a,b} again, which its acked set still is.
	h.Step(testRetry, testRetry/4)
	require.Equal(t, []string{"a", "b"}, a.m.Members())
	h.add("c", nil) // back at once, before a's next renewal
	h.Settle()
	a.part.SetLoseReplies(false)
	h.Step(4*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b", "c"), h.holders())
}

// A member's lease deleted under it (kubectl delete, a cleanup job) does
// not free its keys: the others keep its claim and count it live until
// the lease would have expired by their observation, and it creates its
// lease again at its next round.
// Decision 18.
func TestDeletedLeaseKeepsClaims(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.Step(time.Second, time.Second)
	b := h.add("b", nil) // renews between a's rounds
	h.Step(4*testRetry, testRetry/4)
	require.Equal(t, h.want("a", "b"), h.holders())
	before := len(h.grants)

	h.Step(testRetry/4, testRetry/4) // just after b's round, before a's
	_, err := h.Server.Delete(watchtest.Leases, "ns", "g-b")
	require.NoError(t, err)
	h.Step(time.Minute, testRetry/4)
	assert.Equal(t, h.want("a", "b"), h.holders())
	assert.Len(t, h.grants, before, "no key moved")

	// Deleted under a dead member, its keys move once it expired.
	b.kill()
	_, err = h.Server.Delete(watchtest.Leases, "ns", "g-b")
	require.NoError(t, err)
	h.Step(testLease+2*testRetry, testRetry/4)
	assert.Equal(t, h.want("a"), h.holders())
}

// A dead member's lease that cannot be evicted (here RBAC lets a update
// only its own lease) keeps its claim: its keys do not move while the
// eviction fails, though it no longer counts as live, and every failed
// eviction is reported. Once the eviction gets through, they move at the
// next round. Decisions 18 and 25.
func TestFailedEvictionKeepsClaim(t *testing.T) {
	h := newHarness(t)
	var errs leasetest.Errors
	a := h.add("a", func(c *Config) { c.OnError = errs.Add })
	b := h.add("b", nil)
	h.Step(4*testRetry, testRetry)
	require.Equal(t, h.want("a", "b"), h.holders())
	a.part.SetRefuse(func(r *http.Request) (int, string) {
		if r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/g-b") {
			return leasetest.Forbidden(r)
		}
		return 0, ""
	})
	b.kill()
	// a wakes exactly at b's expiry: b counts as live no more from then
	// (else a would wake again at once, without end).
	h.Step(testLease+2*testRetry, testRetry/4)
	assert.Equal(t, []string{"a"}, a.m.Members(), "b expired")
	mine := map[string]string{}
	for key, id := range h.want("a", "b") {
		if id == "a" {
			mine[key] = id
		}
	}
	assert.Equal(t, mine, h.holders(), "b's keys stay where b's claim puts them")
	require.NotEmpty(t, errs.All())
	for _, err := range errs.All() {
		assert.True(t, httpwatch.IsForbidden(err), err)
		assert.ErrorContains(t, err, "evict lease g-b")
	}
	var lines []string // b, cut off, logs its own failures
	for _, l := range h.Log.Lines(slog.LevelWarn) {
		if strings.Contains(l.Text, "identity=a") {
			lines = append(lines, l.Text)
		}
	}
	require.Len(t, lines, 1)
	assert.Contains(t, lines[0], "shard member: cannot update lease ns/g-b: 403 Forbidden")

	a.part.SetRefuse(nil)
	h.Step(testRetry, testRetry/4)
	assert.Equal(t, h.want("a"), h.holders())
}

// A member whose write of a new set (giving c the keys it wins) took on
// the server although its reply was lost, and whose view then changes
// back (c left meanwhile), must not take those keys back before a write
// of its succeeds: the others read the set it does not believe it
// published, and c, back at once, takes them. Unlike
// TestLostReplyDoesNotHandKeysTwice, only that one write loses its reply.
// Decision 18.
func TestLostReplyOfNewSetHoldsKeysBack(t *testing.T) {
	h := newHarness(t)
	lose := &loseReplyOnce{next: h.Server.Client().Transport}
	a := h.add("a", func(c *Config) { c.Leases = lose.leases(h) })
	h.add("b", nil)
	h.Step(4*testRetry, testRetry)
	require.Equal(t, h.want("a", "b"), h.holders())
	contested := contestedKeys(t, h)

	c := h.add("c", nil)
	h.Settle()
	lose.arm(`"a,b,c"`, func() { // while a's write is out, c leaves
		c.Stop()
		select {
		case <-c.Done:
		case <-time.After(testwait.Timeout):
			t.Error("c did not stop")
		}
	})
	h.Step(testRetry, testRetry) // a sees c, lets go, publishes {a,b,c}, sees c gone
	require.True(t, lose.lost(), "a's write of {a,b,c} reached the server, its reply lost")
	require.NoError(t, c.Err)
	require.Equal(t, []string{"a", "b"}, a.m.Members())
	holders := h.holders()
	for _, key := range contested {
		assert.NotEqual(t, "a", holders[key], "%s taken back while the server shows it given away", key)
	}

	h.add("c", nil) // back before a's next write: it reads {a,b,c} in a's lease
	h.Settle()
	h.Step(4*testRetry, testRetry/4)
	assert.Equal(t, h.want("a", "b", "c"), h.holders())
}

// loseReplyOnce passes requests to next, but loses the reply of the first
// update whose body contains what arm was given, once that update took,
// calling the function arm was given before it reports the loss.
type loseReplyOnce struct {
	next http.RoundTripper

	mu      sync.Mutex
	match   string
	onLost  func()
	dropped bool
}

func (l *loseReplyOnce) arm(match string, onLost func()) {
	l.mu.Lock()
	l.match, l.onLost = match, onLost
	l.mu.Unlock()
}

func (l *loseReplyOnce) lost() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.dropped }

// leases is a client of the harness's leases going through l.
func (l *loseReplyOnce) leases(h *harness) *httpwatch.ResourceClient {
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: h.Server.URL, QPS: -1, Transport: l})
	require.NoError(h.T, err)
	c.RetryMax = 0
	h.T.Cleanup(c.CloseIdleConnections)
	return c.Resource(leasetest.Resource)
}

func (l *loseReplyOnce) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodPut || r.Body == nil {
		return l.next.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := l.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	drop := l.match != "" && !l.dropped && bytes.Contains(body, []byte(l.match))
	l.dropped = l.dropped || drop
	onLost := l.onLost
	l.mu.Unlock()
	if !drop {
		return resp, nil
	}
	resp.Body.Close()
	if onLost != nil {
		onLost()
	}
	return nil, leasetest.ErrReplyLost
}

// contestedKeys are the keys that a owns among {a,b} and c among {a,b,c}:
// those a must give up when c joins.
func contestedKeys(t *testing.T, h *harness) []string {
	t.Helper()
	var contested []string
	for key, id := range h.want("a", "b", "c") {
		if id == "c" && Owner(key, []string{"a", "b"}) == "a" {
			contested = append(contested, key)
		}
	}
	require.NotEmpty(t, contested)
	return contested
}
