package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2/client"
	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/stretchr/testify/assert"
)

// fault is one kind of trouble on the path between the client and the
// server, and what the client must make of it.
type fault struct {
	name   string
	toxics []toxic       // on the proxy while the fault lasts
	hold   time.Duration // how long the toxics stay
	server bool          // instead of toxics: the kube-apiserver is killed and started again
	// converge bounds the time from the end of the fault to a cache equal
	// to the server's state.
	converge time.Duration
	// silent: the connection stops answering without closing, so the
	// leadership must move and the shard group drop the proxied member.
	silent bool
	log    logCheck
}

// Bounds. A fault that leaves connections working (latency, bandwidth,
// slicer) delays what is in flight: the cache converges within 10 s of its
// end. A fault that breaks connections leaves the reflector backing off,
// 800 ms doubling to at most 30 s, and its next list or watch may wait up
// to requestTimeout: 30 s + 10 s. A restarted server first has to be
// ready, which the fault's end waits for.
const (
	convergeFlowing = 10 * time.Second
	convergeBroken  = 40 * time.Second
)

// What the client behind the proxy may say at Warn or above, by fault.
// A connection the HTTP/2 ping closed is said by whoever met it, by the
// failure table (decision 38): the client itself says nothing.
const (
	watchFailed = `^WARN reflector: watch (start )?failed`
	listFailed  = `^WARN reflector: list failed`
	leaseFailed = `^WARN (leader|shard member)`
)

var faults = []fault{
	{name: "latency", hold: 15 * time.Second, converge: convergeFlowing, log: allow(0),
		toxics: []toxic{{"latency", "downstream", toxiproxy.Attributes{"latency": 500, "jitter": 250}}}},
	{name: "bandwidth", hold: 15 * time.Second, converge: convergeFlowing, log: allow(0),
		toxics: []toxic{{"bandwidth", "downstream", toxiproxy.Attributes{"rate": 32}}}},
	{name: "slicer", hold: 15 * time.Second, converge: convergeFlowing, log: allow(0),
		toxics: []toxic{{"slicer", "downstream", toxiproxy.Attributes{"average_size": 64, "size_variation": 32, "delay": 500}}}},
	{name: "limit_data", hold: 15 * time.Second, converge: convergeBroken, log: allow(8, watchFailed, listFailed, leaseFailed),
		toxics: []toxic{{"limit_data", "downstream", toxiproxy.Attributes{"bytes": 16 << 10}}}},
	{name: "reset_peer", hold: 10 * time.Second, converge: convergeBroken, log: allow(8, watchFailed, listFailed, leaseFailed),
		toxics: []toxic{{"reset_peer", "downstream", toxiproxy.Attributes{"timeout": 0}}, {"reset_peer", "upstream", toxiproxy.Attributes{"timeout": 0}}}},
	{name: "black hole", hold: 20 * time.Second, converge: convergeBroken, silent: true, log: allow(8, watchFailed, listFailed, leaseFailed),
		toxics: []toxic{{"timeout", "downstream", toxiproxy.Attributes{"timeout": 0}}, {"timeout", "upstream", toxiproxy.Attributes{"timeout": 0}}}},
	{name: "slow_close", hold: 15 * time.Second, converge: convergeBroken, log: allow(8, watchFailed, listFailed, leaseFailed),
		toxics: []toxic{{"limit_data", "downstream", toxiproxy.Attributes{"bytes": 16 << 10}}, {"slow_close", "downstream", toxiproxy.Attributes{"delay": 8000}}}},
	{name: "apiserver restart", server: true, converge: convergeBroken, log: allow(8, watchFailed, listFailed, leaseFailed)},
}

// TestChaos puts each fault in turn between one informer of 1,000
// configmaps, a leader candidate and a shard member, all on one client,
// and the real kube-apiserver, while a writer on another path changes the
// configmaps. After each fault: the cache and the handler's view equal the
// server's state within the fault's bound; what was logged at Warn or
// above is what happened, each said once, no flood; the leadership
// returned or moved within leaseDuration + leaderGrace of the fault's
// start, and comes back to the candidate behind the proxy once the other
// steps aside; the shard group is whole again.
func TestChaos(t *testing.T) {
	e := newEnv(t)
	e.fill(t, 1000)
	rec := newRecorder()
	inf := e.startInformer(t, rec)
	group := e.startShard(t)
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("cm-%04d", i)
	}
	w := e.newWriter("cm-new", names)
	for _, f := range faults {
		t.Run(strings.ReplaceAll(f.name, " ", "_"), func(t *testing.T) { e.inject(t, f, inf, rec, group, w) })
	}
	rec.mu.Lock()
	assert.Empty(t, rec.back, "no object's version went backwards in the handler")
	rec.mu.Unlock()
}

// inject runs fault f with the writer busy, then checks the cache, the
// log, the leadership and the shard group.
func (e *env) inject(t *testing.T, f fault, inf *listwatch.Informer, rec *recorder, group *members, w *writer) {
	ts := &terms{}
	lease := "leader-" + strings.NewReplacer(" ", "-", "_", "-").Replace(f.name)
	proxied := e.candidate(t, e.proxied, lease, "proxied", ts, e.logger)
	ts.waitLeader(t, "proxied", wait, "alone, before the fault")
	direct := e.candidate(t, e.direct, lease, "direct", ts, discard)
	mark := e.log.mark()

	before, failedBefore := w.n, w.failed
	stop, wrote := make(chan struct{}), make(chan struct{})
	go func() { w.run(stop, 50*time.Millisecond); close(wrote) }()
	dropped := make(chan time.Time, 1)
	go watchDrop(group, stop, dropped)
	start := time.Now()
	if f.server {
		e.killAPIServer(t)
		e.startAPIServer(t)
	} else {
		e.addToxics(t, f.toxics)
		<-time.After(f.hold) // the fault lasts this long
		e.removeToxics(t, f.toxics)
	}
	end := time.Now()
	close(stop)
	testwait.RecvWithin(t, wrote, wait, "the writer to stop")
	during, failed := w.n-before, w.failed-failedBefore
	for range 20 { // and a few changes after the fault
		w.step(context.Background())
	}
	took := e.converge(t, inf, rec, f.converge)
	t.Logf("%s: lasted %s; the cache equalled the server %s after it ended (%d changes during it, %d of them failed; stats %+v)",
		f.name, end.Sub(start).Round(time.Millisecond), took.Round(time.Millisecond), during, failed, inf.Stats())

	gap, why := ts.longestGap(start)
	assert.LessOrEqual(t, gap, leaseDuration+leaderGrace, "nobody led for too long: %s", why)
	if f.silent {
		assert.True(t, ts.ledWithin("direct", start, leaseDuration+leaderGrace),
			"the leadership did not move to the direct candidate within %s of the connection going silent", leaseDuration+leaderGrace)
		select {
		case at := <-dropped:
			assert.LessOrEqual(t, at.Sub(start), leaseDuration+leaderGrace, "the direct shard member dropped the silent one late")
		default:
			t.Errorf("the direct shard member never dropped the silent one during the fault")
		}
	}
	direct.halt(t)()
	ts.waitLeader(t, "proxied", leaderGrace, "the direct candidate stepped aside after the fault")
	proxied.halt(t)()
	ts.mu.Lock()
	assert.Empty(t, ts.overlap, "two leaders at once")
	ts.mu.Unlock()
	group.waitWhole(t, leaderGrace, "after the fault")

	lines := e.log.since(mark, slog.LevelInfo)
	for _, l := range lines {
		t.Logf("logged: %s", l)
	}
	for _, p := range f.log.problems(lines) {
		t.Error(p)
	}
}

// watchDrop sends when the direct shard member first sees itself alone,
// until stop is closed.
func watchDrop(group *members, stop <-chan struct{}, dropped chan<- time.Time) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			if slices.Equal(group.direct.Members(), []string{"direct"}) {
				dropped <- time.Now()
				return
			}
		}
	}
}
