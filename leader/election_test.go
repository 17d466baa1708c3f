package leader

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/internal/lease"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Three candidates start at once: they race to create the lease (two get
// 409 AlreadyExists) and then only one leads, renewing, for a minute.
func TestThreeCandidatesOneLeader(t *testing.T) {
	h := newHarness(t)
	seen := make(chan string, 10)
	for _, id := range []string{"a", "b", "c"} {
		h.add(id, func(c *Config) { c.OnNewLeader = func(l string) { seen <- l } })
	}
	h.Settle()
	lead := h.leaders()
	require.Len(t, lead, 1)
	h.Step(time.Minute, testRetry)
	assert.Equal(t, lead, h.leaders())
	rec := h.record()
	assert.Equal(t, lead[0], rec.HolderIdentity)
	assert.Equal(t, 0, rec.LeaseTransitions)
	assert.Equal(t, 15, rec.LeaseDurationSeconds)
	assert.Equal(t, h.Clock.Now(), rec.RenewTime, "renewed every RetryPeriod")
	for range 3 {
		assert.Equal(t, lead[0], testwait.Recv(t, seen, "a candidate to report the leader"), "every candidate reports the one leader")
	}
	assert.Empty(t, h.Log.Lines(slog.LevelInfo), "healthy candidates log nothing above Debug (decision 25)")
}

// A leader cut off from the server steps down RenewDeadline after its last
// renewal was sent; another candidate takes over LeaseDuration after it
// last saw the lease change, so the two terms never overlap (decision 16:
// the deadline counts from the send of the last successful renewal, and b
// retries the moment its observed lease expires).
func TestPartitionedLeaderStepsDownBeforeTakeover(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	require.Equal(t, []string{"a"}, h.leaders())
	h.add("b", nil)
	h.Settle()
	h.Step(3*testRetry, testRetry)
	lastRenew := h.record().RenewTime

	a.part.SetDrop(true)
	h.Step(2*testLease, 500*time.Millisecond)
	require.Equal(t, []string{"b"}, h.leaders())
	testwait.Recv(t, a.Done, "a to stop")
	require.ErrorIs(t, a.Err, ErrLost)
	require.ErrorIs(t, a.Err, errDeadline)

	terms := h.allTerms()
	require.Len(t, terms, 2)
	assert.Equal(t, lastRenew.Add(testRenew), terms[0].stop, "a stops exactly at its renew deadline")
	assert.False(t, terms[1].start.Before(lastRenew.Add(testLease)), "b starts no earlier than LeaseDuration after a's last renewal")
	assert.False(t, terms[1].start.After(lastRenew.Add(testLease+testRetry)), "b starts within LeaseDuration + RetryPeriod")
	rec := h.record()
	assert.Equal(t, "b", rec.HolderIdentity)
	assert.Equal(t, 1, rec.LeaseTransitions)
	assert.Equal(t, terms[1].start, rec.AcquireTime)
}

// A renewal that hangs (a slow server) does not extend leadership: the
// watchdog ends it at the deadline and the hung request is cancelled
// (decision 16).
func TestSlowRenewalStepsDown(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	h.add("b", nil)
	h.Settle()
	lastRenew := h.record().RenewTime
	a.part.Hold() // never released
	h.Step(testLease+testRetry, 500*time.Millisecond)
	testwait.Recv(t, a.Done, "a to stop")
	require.ErrorIs(t, a.Err, ErrLost)
	assert.Equal(t, []string{"b"}, h.leaders())
	terms := h.allTerms()
	assert.Equal(t, lastRenew.Add(testRenew), terms[0].stop)
	assert.False(t, terms[1].start.Before(lastRenew.Add(testLease)))
}

// Renewals that fail for a while but get through before RenewDeadline keep
// the leader: failures within the deadline are retried, not fatal.
func TestTransientRenewalFailuresKeepLeader(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	h.add("b", nil)
	h.Settle()
	a.part.SetDrop(true)
	h.Step(testRenew-2*testRetry, testRetry)
	a.part.SetDrop(false)
	h.Step(time.Minute, testRetry)
	assert.Equal(t, []string{"a"}, h.leaders())
	assert.Len(t, h.allTerms(), 1)
}

// With ReleaseOnCancel a cancelled leader waits for OnStartedLeading to
// return, then clears the holder with a one-second duration: of two
// waiting candidates (racing, one gets a 409 Conflict) one takes over at
// its next attempt rather than after LeaseDuration.
func TestReleaseOnCancelHandsOverAtNextRetry(t *testing.T) {
	h := newHarness(t)
	release := func(c *Config) { c.ReleaseOnCancel = true }
	a := h.add("a", release)
	h.Settle()
	h.add("b", release)
	h.add("c", release)
	h.Settle()
	a.Stop()
	testwait.Recv(t, a.Done, "a to stop")
	require.NoError(t, a.Err)
	rec := h.record()
	assert.Empty(t, rec.HolderIdentity)
	assert.Equal(t, 1, rec.LeaseDurationSeconds)
	stopped := h.Clock.Now()

	h.Step(testRetry, 500*time.Millisecond)
	lead := h.leaders()
	require.Len(t, lead, 1)
	terms := h.allTerms()
	assert.False(t, terms[1].start.After(stopped.Add(testRetry)), "taken over within RetryPeriod")
	assert.Equal(t, 1, h.record().LeaseTransitions)
}

// Expiry is judged by the local clock from the last observed change, never
// from the timestamps in the record: a live holder whose clock is years
// behind keeps the lease, a dead one whose clock is years ahead loses it
// after LeaseDuration.
func TestExpiryIgnoresRecordedTimes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		skew   time.Duration
		renews bool
		taken  bool
	}{
		{"live holder, clock behind", -10 * 365 * 24 * time.Hour, true, false},
		{"dead holder, clock ahead", 10 * 365 * 24 * time.Hour, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			at := h.Clock.Now().Add(tc.skew)
			writeLease(t, h, Record{HolderIdentity: "other", LeaseDurationSeconds: 15, AcquireTime: at, RenewTime: at})
			h.add("a", nil)
			h.Settle()
			for range 3 * int(testLease/testRetry) {
				if rec := h.record(); tc.renews {
					rec.RenewTime = rec.RenewTime.Add(time.Second)
					writeLease(t, h, rec)
				}
				h.Step(testRetry, testRetry)
			}
			assert.Equal(t, tc.taken, h.record().HolderIdentity == "a")
		})
	}
}

// writeLease stores rec as the lease, as another process would.
func writeLease(t *testing.T, h *harness, rec Record) {
	t.Helper()
	l := lease.Lease{Name: "lock"}
	if cur, err := h.Server.Get(watchtest.Leases, "ns", "lock"); err == nil {
		_, err = h.Server.Update(watchtest.Leases, l.Encode(cur, rec))
		require.NoError(t, err)
		return
	}
	obj := l.Encode(nil, rec)
	_, err := h.Server.Create(watchtest.Leases, strings.Replace(string(obj), `"name":"lock"`, `"name":"lock","namespace":"ns"`, 1))
	require.NoError(t, err)
}

// A take whose reply arrives after RenewDeadline (a slow network, or the
// process paused once its request was out) does not make a leader: by
// then another candidate may have seen the take, waited LeaseDuration,
// and taken the lease itself.
// Decision 16.
func TestLateTakeDoesNotLead(t *testing.T) {
	h := newHarness(t)
	b := h.add("b", nil)
	h.Settle()
	a := h.add("a", nil)
	h.Settle()
	h.Step(time.Second, time.Second)
	h.add("c", nil) // sees b's lease a second after a: a tries first
	h.Settle()
	require.Equal(t, []string{"b"}, h.leaders())

	b.part.SetDrop(true)
	a.part.HoldReplies()
	h.Step(2*testLease+testRetry, 500*time.Millisecond)
	require.Equal(t, "c", h.record().HolderIdentity, "c took the lease a took and never renewed")
	require.Equal(t, []string{"c"}, h.leaders())

	h.ReleaseHeld(a.part)
	h.Settle()
	h.Step(testRetry, testRetry)
	assert.Equal(t, []string{"c"}, h.leaders())
	for _, tm := range h.allTerms() {
		assert.NotEqual(t, "a", tm.identity, "a never leads")
	}
}

// A leader shut down while a renewal is out (written by the server, its
// reply not yet back) still releases the lease: the renewal moved the
// resourceVersion on, so the release reads the lease again rather than
// giving up on a 409 and leaving the others to wait LeaseDuration.
// Decision 16.
func TestReleaseAfterRenewalInFlight(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", func(c *Config) { c.ReleaseOnCancel = true })
	h.Settle()
	require.Equal(t, []string{"a"}, h.leaders())
	a.part.HoldReplies()
	h.Step(testRetry, testRetry) // the renewal is written, its reply held
	renewed := h.record().RenewTime
	require.Equal(t, h.Clock.Now(), renewed)

	a.part.StopHolding() // the release goes through at once; the renewal's reply never comes
	a.Stop()
	testwait.Recv(t, a.Done, "a to stop")
	require.NoError(t, a.Err)
	assert.Empty(t, h.record().HolderIdentity, "released")
}

// A lease deleted under a live leader (kubectl delete, a cleanup job) is
// not free for the taking: a candidate that saw it held waits for it to
// expire by its observation, as if it had not changed, and the leader,
// renewing, creates it again meanwhile.
// Decision 16.
func TestDeletedLeaseIsNotTakenFromLiveLeader(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	h.Step(time.Second, time.Second)
	h.add("b", nil) // tries between a's renewals
	h.Settle()
	h.Step(testRetry+testRetry/2, testRetry/4) // just after a's renewal, before b's try
	require.Equal(t, []string{"a"}, h.leaders())
	_, err := h.Server.Delete(watchtest.Leases, "ns", "lock")
	require.NoError(t, err)
	h.Step(time.Minute, testRetry/4)
	assert.Equal(t, []string{"a"}, h.leaders())
	assert.Len(t, h.allTerms(), 1)

	// Deleted under a dead leader, it is created by b once a expired.
	a.part.SetDrop(true)
	_, err = h.Server.Delete(watchtest.Leases, "ns", "lock")
	require.NoError(t, err)
	h.Step(testLease+2*testRetry, testRetry/4)
	assert.Equal(t, []string{"b"}, h.leaders())
}
