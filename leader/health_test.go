package leader

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// Check fails only while a leader's OnStartedLeading goes on after its
// renew deadline by more than the tolerance: a leader that ignores its
// context.
func TestCheckFailsWhenLeaderOutlivesDeadline(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	a := h.add("a", func(c *Config) {
		c.OnStartedLeading = func(ctx context.Context) {
			h.lead("a", ctx)
			<-release // ignores its context until the test lets go
		}
	})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	t.Cleanup(letGo) // runs before the harness waits for Run to return
	h.Settle()
	h.leaders()
	require.NoError(t, a.e.Check(0))
	a.part.SetDrop(true)
	h.Step(testRenew-testRetry, testRetry)
	h.Clock.Step(testRetry) // the deadline: the watchdog cancels a's context
	require.Eventually(t, func() bool { return len(h.allTerms()) == 1 && h.allTerms()[0].ctx.Err() != nil },
		testwait.Timeout, time.Millisecond)
	require.NoError(t, a.e.Check(time.Second), "at the deadline, within tolerance")
	h.Clock.Step(2 * time.Second)
	assert.ErrorContains(t, a.e.Check(time.Second), "renewal overdue by 2s")
	assert.NoError(t, a.e.Check(2*time.Second), "overdue by exactly the tolerance")
	assert.ErrorContains(t, a.e.Check(2*time.Second-time.Nanosecond), "renewal overdue by 2s")
	letGo()
	testwait.Recv(t, a.Done, "a to stop")
	require.NoError(t, a.e.Check(0), "not leading any more")
}

// The record is written as the real server wants it: MicroTime with
// microseconds in UTC, and the holder's duration in whole seconds.
func TestRecordFormat(t *testing.T) {
	h := newHarness(t)
	h.Clock.Step(1234567 * time.Nanosecond)
	stopped := make(chan struct{})
	h.add("a", func(c *Config) { c.OnStoppedLeading = func() { close(stopped) } })
	h.Settle()
	raw, err := h.Server.Get(watchtest.Leases, "ns", "lock")
	require.NoError(t, err)
	spec := raw.Get("spec")
	assert.Equal(t, "2026-01-01T00:00:00.001234Z", spec.Get("renewTime").String())
	assert.Equal(t, "2026-01-01T00:00:00.001234Z", spec.Get("acquireTime").String())
	assert.Equal(t, "a", spec.Get("holderIdentity").String())
	assert.EqualValues(t, 15, spec.Get("leaseDurationSeconds").Int())
	assert.EqualValues(t, 0, spec.Get("leaseTransitions").Int())
	h.nodes[0].Stop()
	testwait.Recv(t, stopped, "a to stop leading")
}
