package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/leader"
	"github.com/listwatch/listwatch/shard"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/require"
)

// term is one candidate's time as leader.
type term struct {
	who        string
	start, end time.Time // end zero: still leading
}

// terms records the leaders of one lease, and any two at once.
type terms struct {
	mu      sync.Mutex
	all     []*term
	overlap []string
}

func (ts *terms) lead(who string) func(context.Context) {
	return func(ctx context.Context) {
		ts.mu.Lock()
		for _, o := range ts.all {
			if o.end.IsZero() {
				ts.overlap = append(ts.overlap, who+" started while "+o.who+" leads")
			}
		}
		tm := &term{who: who, start: time.Now()}
		ts.all = append(ts.all, tm)
		ts.mu.Unlock()
		<-ctx.Done()
		ts.mu.Lock()
		tm.end = time.Now()
		ts.mu.Unlock()
	}
}

// leading is who leads now, "" if nobody.
func (ts *terms) leading() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, tm := range ts.all {
		if tm.end.IsZero() {
			return tm.who
		}
	}
	return ""
}

// longestGap is the longest time after from with no leader, up to now.
func (ts *terms) longestGap(from time.Time) (time.Duration, string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	var longest time.Duration
	var desc string
	for i, tm := range ts.all {
		if tm.end.IsZero() || tm.end.Before(from) {
			continue
		}
		next := time.Now()
		for _, n := range ts.all[i+1:] {
			next = n.start
			break
		}
		if gap := next.Sub(tm.end); gap > longest {
			longest, desc = gap, fmt.Sprintf("%s stepped down %s after the fault began; the next leader came %s later", tm.who, tm.end.Sub(from).Round(time.Millisecond), gap.Round(time.Millisecond))
		}
	}
	return longest, desc
}

// ledWithin reports whether who began to lead within d of from.
func (ts *terms) ledWithin(who string, from time.Time, d time.Duration) bool {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, tm := range ts.all {
		if tm.who == who && !tm.start.Before(from) && tm.start.Sub(from) <= d {
			return true
		}
	}
	return false
}

// candidate runs elections for one identity until stopped: an elector that
// led and lost is started again, as a restarted process would be.
type candidate struct {
	stop context.CancelFunc
	done chan struct{}
}

func (e *env) candidate(t *testing.T, c *httpwatch.Client, lease, who string, ts *terms, log *slog.Logger) *candidate {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cd := &candidate{stop: cancel, done: make(chan struct{})}
	_, err := leader.New(e.leaderConfig(c, lease, who, ts, log))
	require.NoError(t, err)
	go func() {
		defer close(cd.done)
		for ctx.Err() == nil {
			el, _ := leader.New(e.leaderConfig(c, lease, who, ts, log))
			_ = el.Run(ctx)
		}
	}()
	t.Cleanup(cd.halt(t))
	return cd
}

func (e *env) leaderConfig(c *httpwatch.Client, lease, who string, ts *terms, log *slog.Logger) leader.Config {
	return leader.Config{
		Leases: e.resource(c, leases), Name: lease, Identity: who,
		LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod,
		ReleaseOnCancel: true, OnStartedLeading: ts.lead(who), Logger: log,
	}
}

// halt stops the candidate (releasing the lease if it leads) and waits.
func (cd *candidate) halt(t *testing.T) func() {
	return func() {
		cd.stop()
		testwait.RecvWithin(t, cd.done, wait, "the candidate to stop")
	}
}

// waitLeader waits, at most within, until who leads.
func (ts *terms) waitLeader(t *testing.T, who string, within time.Duration, why string) {
	t.Helper()
	require.Eventually(t, func() bool { return ts.leading() == who }, within, 20*time.Millisecond,
		"%s did not lead within %s (%s); leading: %q", who, within, why, ts.leading())
}

// members is a shard group of two: one member through the proxy, one on
// the direct path.
type members struct {
	proxied, direct *shard.Member
}

func (e *env) startShard(t *testing.T) *members {
	t.Helper()
	m := &members{}
	for _, side := range []struct {
		c   *httpwatch.Client
		who string
		log *slog.Logger
		to  **shard.Member
	}{{e.proxied, "proxied", e.logger, &m.proxied}, {e.direct, "direct", discard, &m.direct}} {
		mem, err := shard.New(shard.Config{
			Leases: e.resource(side.c, leases), Group: "chaos", Identity: side.who,
			LeaseDuration: leaseDuration, RenewDeadline: renewDeadline, RetryPeriod: retryPeriod, Logger: side.log,
		})
		require.NoError(t, err)
		*side.to = mem
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = mem.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); testwait.RecvWithin(t, done, wait, "the shard member to stop") })
	}
	m.waitWhole(t, wait, "the group to form")
	return m
}

var both = []string{"direct", "proxied"}

// waitWhole waits until both members see both.
func (m *members) waitWhole(t *testing.T, within time.Duration, why string) {
	t.Helper()
	require.Eventually(t, func() bool {
		return slices.Equal(m.proxied.Members(), both) && slices.Equal(m.direct.Members(), both)
	}, within, 50*time.Millisecond, "the shard group was not whole within %s (%s): proxied sees %v, direct sees %v",
		within, why, m.proxied.Members(), m.direct.Members())
}
