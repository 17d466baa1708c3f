package reconcile_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/reconcile"
	"github.com/listwatch/listwatch/watchtest"
)

const heldLease = `{"metadata":{"name":"ctl","namespace":"ns"},"spec":{"holderIdentity":%q,"leaseDurationSeconds":15}}`

// A candidate reconciles nothing while another replica leads, though its
// cache syncs; once it gains the lease it reconciles every cached key; when
// it loses the lease mid-reconcile the reconcile's context is cancelled,
// nothing more is reconciled, and Run returns leader.ErrLost (decision 30).
func TestLeadingGainedAndLostMidReconcile(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Create(watchtest.Leases, sprintf(heldLease, "other"))
	require.NoError(t, err)
	f.create(watchtest.ConfigMaps, "ns", "a", "")
	rec := newRecorder()
	rec.answer = func(ctx context.Context, key string) (reconcile.Result, error) {
		<-ctx.Done() // mid-reconcile until the lease is lost
		return reconcile.Result{}, ctx.Err()
	}
	r := f.runner(f.informer(watchtest.ConfigMaps), rec)
	r.Logger = discard()
	r.Election = &leader.Config{
		Leases: f.client.Resource(watchtest.Leases).Namespace("ns"), Name: "ctl", Identity: "me",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Jitter: func() float64 { return 0 }, Logger: discard(),
	}
	x := start(t, r)
	require.Eventually(t, func() bool { return r.Ready() == nil }, wait, time.Millisecond, "synced while following")
	assert.False(t, r.Leading())
	f.step(14 * time.Second)
	rec.none(t)
	assert.False(t, r.Leading(), "the other's lease has not expired")

	stepUntil(t, f.clk, time.Second, r.Leading, "takes the expired lease")
	c := rec.next(t)
	assert.Equal(t, "ns/a", c.key, "every cached key is queued when leadership is gained")

	// Another replica takes the lease under us.
	raw, err := f.s.Get(watchtest.Leases, "ns", "ctl")
	require.NoError(t, err)
	lease := raw.String()
	_, err = f.s.Update(watchtest.Leases, replaceHolder(t, lease, "other"))
	require.NoError(t, err)
	stepUntil(t, f.clk, time.Second, func() bool { return c.ctx.Err() != nil }, "the reconcile's context ends with the lease")
	require.ErrorIs(t, x.wait(t), leader.ErrLost)
	assert.False(t, r.Leading())
	rec.none(t)
	assert.Error(t, r.Live(), "a runner that lost the lease is not live: the process restarts as a candidate")
}
