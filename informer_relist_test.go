package listwatch

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/processor"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func podJSON(name, version string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q,"namespace":"ns","labels":{"v":%q}}}`, name, version)
}

// decision 8, conformance 13, 59: changes made while the watch is down
// reach every handler through the relist that follows a 410, each exactly
// once and as what it is (update, delete with finalStateUnknown, add);
// objects that did not change produce nothing for handlers whose resync is
// not due, with or without a resync period. conformance 45 differs on
// purpose (decision 2): the relist is applied key by key from the queue,
// not as one ReplacedAll whose deletions are all announced first.
func TestInformerRelistAfterOutageDeliversEachChange(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	before := map[string]string{}
	for _, name := range []string{"keep", "change", "remove"} {
		data, err := s.Create(watchtest.Pods, podJSON(name, "1"))
		require.NoError(t, err)
		before[name] = data.ResourceVersion()
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	defer client.CloseIdleConnections()

	// The reflector's clock is fake, so after the 410 it waits in its
	// backoff until the test steps the clock: the outage.
	fake := clock.NewFake(time.Unix(0, 0))
	inf := NewInformer(client.Resource(podsRes), time.Hour)
	inf.Reflector.PagedList = true
	inf.Clock = fake
	inf.Reflector.Backoff = reflector.Backoff{Initial: time.Second, Jitter: -1}
	recs := []*recorder{newRecorder(), newRecorder(), newRecorder()}
	var regs []*processor.Registration
	for i, rec := range recs {
		period := time.Duration(0)
		if i == 2 {
			period = time.Hour // has a resync period, not due during the test
		}
		reg, err := inf.AddEventHandlerWithResync(rec, period)
		require.NoError(t, err)
		regs = append(regs, reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	for _, reg := range regs {
		require.Eventually(t, reg.HasSynced, wait, time.Millisecond)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), wait)
	defer wcancel()
	require.NoError(t, s.WaitForWatches(wctx, 1))

	// Once it carried an event, the watch is not "very short" (conformance
	// 21): its end makes the reflector watch again, and that watch gets the
	// 410.
	s.SendBookmarks()
	require.Eventually(t, func() bool { return inf.Stats().Events == 1 }, wait, time.Millisecond)
	s.FailNext(watchtest.Failure{Code: http.StatusGone, Reason: "Expired", InStream: true, Verbs: []string{"watch"}})
	s.CloseWatches()
	// Once the 410 is reported its watch is closed, and with it the idle
	// watchdog the bookmark armed (decision 36); then two timers: the
	// resync check and the backoff before the relist.
	require.Eventually(t, func() bool { return inf.Stats().Errors >= 1 }, wait, time.Millisecond)
	require.NoError(t, fake.WaitForWaiters(wctx, 2), "the reflector is not waiting to relist")
	require.Zero(t, s.OpenWatches())

	data, err := s.Update(watchtest.Pods, podJSON("change", "2"))
	require.NoError(t, err)
	changed := data.ResourceVersion()
	_, err = s.Delete(watchtest.Pods, "ns", "remove")
	require.NoError(t, err)
	_, err = s.Create(watchtest.Pods, podJSON("new", "1"))
	require.NoError(t, err)

	fake.Step(time.Second)
	require.Eventually(t, func() bool { return inf.Stats().Lists == 2 }, wait, time.Millisecond)
	var verbs []string
	for _, r := range s.Requests() {
		verbs = append(verbs, r.Verb)
	}
	require.Equal(t, []string{"list", "watch", "watch", "list"}, verbs[:4], "relisted after the 410 only")
	// Created after the relist, the marker reaches each handler after
	// everything the relist produced.
	_, err = s.Create(watchtest.Pods, podJSON("marker", "1"))
	require.NoError(t, err)
	for i, rec := range recs {
		require.Eventually(t, func() bool { return slices.Contains(rec.lines(), "add ns/marker initial=false") }, wait, time.Millisecond, "handler %d: %q", i, rec.lines())
		lines := rec.lines()
		require.Len(t, lines, 7, "handler %d: %q", i, lines)
		relist := slices.Clone(lines[3:6])
		slices.Sort(relist)
		assert.Equal(t, []string{
			"add ns/new initial=false",
			"delete ns/remove unknown=true",
			fmt.Sprintf("update ns/change %s->%s", before["change"], changed),
		}, relist, "handler %d", i)
		assert.Equal(t, "add ns/marker initial=false", lines[6], "handler %d", i)
	}
}
