package leader

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A waiting candidate's retries are spread by JitterFactor: each wait is
// RetryPeriod plus Jitter()·JitterFactor·RetryPeriod, so candidates that
// started together do not hit the server together. Decision 16.
func TestRetryWaitsSpreadByJitterFactor(t *testing.T) {
	h := newHarness(t)
	h.add("a", nil)
	h.Settle()
	b := h.add("b", func(c *Config) {
		c.JitterFactor = 1.5
		c.Jitter = func() float64 { return 0.25 }
	})
	h.Settle()
	want := testRetry + time.Duration(0.25*1.5*float64(testRetry)) // 2.75s
	for range 3 {
		b.mu.Lock()
		wake := b.wake
		b.mu.Unlock()
		require.Equal(t, h.Clock.Now().Add(want), wake)
		h.Clock.Set(wake)
		h.Settle()
	}
}

// A renewal whose reply comes late moves the deadline to RenewDeadline
// after the renewal was sent, not after the reply came: the others count
// LeaseDuration from the write, which was no later than the send. Then
// cut off, the leader steps down exactly then. Decision 16.
func TestLateRenewalReplyCountsFromTheSend(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	require.Equal(t, []string{"a"}, h.leaders())
	a.part.HoldReplies()
	h.Step(testRetry, testRetry) // the renewal is written; its reply is held
	sent := h.record().RenewTime
	require.Equal(t, h.Clock.Now(), sent)
	require.Equal(t, 1, a.part.Held())

	h.Step(5*time.Second, 500*time.Millisecond)
	a.part.SetDrop(true)  // from now on nothing gets through
	h.ReleaseHeld(a.part) // the late reply arrives, 5s after the send
	h.Step(testLease, 500*time.Millisecond)
	testwait.Recv(t, a.Done, "a to step down")
	require.ErrorIs(t, a.Err, ErrLost)
	terms := h.allTerms()
	require.Len(t, terms, 1)
	assert.Equal(t, sent.Add(testRenew), terms[0].stop, "RenewDeadline after the send")
}

// A renewal that finds another identity holding the lease, alive by this
// candidate's observation (it changed just now), ends leadership at once,
// not at the renew deadline. Decision 16.
func TestRenewalFindingAnotherHolderStepsDownAtOnce(t *testing.T) {
	h := newHarness(t)
	a := h.add("a", nil)
	h.Settle()
	require.Equal(t, []string{"a"}, h.leaders())
	h.Step(time.Second, time.Second)
	rec := h.record()
	rec.HolderIdentity, rec.RenewTime = "other", h.Clock.Now()
	writeLease(t, h, rec) // taken by someone who thought a was dead
	h.Step(time.Second, time.Second)
	at := h.Clock.Now() // a's next renewal
	testwait.Recv(t, a.Done, "a to step down")
	require.ErrorIs(t, a.Err, ErrLost)
	terms := h.allTerms()
	require.Len(t, terms, 1)
	assert.Equal(t, at, terms[0].stop, "at the renewal that found the other holder")
	assert.Equal(t, "other", h.record().HolderIdentity, "not overwritten")
}

// A take that fails just as the holder's lease expires (here the server
// fails the update once) is tried again a RetryPeriod later: the expiry
// shortens only waits for a lease still held, else a failing server would
// be retried in a loop without pause. Decision 16.
func TestTakeFailingAtExpiryRetriesAfterRetryPeriod(t *testing.T) {
	h := newHarness(t)
	held := h.Clock.Now()
	writeLease(t, h, Record{HolderIdentity: "other", LeaseDurationSeconds: 15, AcquireTime: held, RenewTime: held})
	var failed atomic.Bool
	b := h.add("b", nil)
	b.part.SetRefuse(func(r *http.Request) (int, string) {
		if r.Method != http.MethodPut || failed.Swap(true) {
			return 0, ""
		}
		return http.StatusInternalServerError, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",` +
			`"message":"etcdserver: request timed out","reason":"InternalError","code":500}`
	})
	h.Settle()
	h.Step(testLease, time.Second) // b wakes exactly at the expiry it observed
	require.True(t, failed.Load(), "b tried to take the lease at its expiry")
	assert.Empty(t, h.leaders(), "the take failed")
	b.mu.Lock()
	wake := b.wake
	b.mu.Unlock()
	assert.Equal(t, held.Add(testLease+testRetry), wake, "the next try a RetryPeriod later")

	h.Step(testRetry, time.Second)
	require.Equal(t, []string{"b"}, h.leaders())
	assert.Equal(t, held.Add(testLease+testRetry), h.allTerms()[0].start)
}
