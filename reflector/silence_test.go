package reflector

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// decision 36: the source bounds a watch's silence by the reflector's
// WatchIdleTimeout from the watch's start, the first watch of a new client
// included (it hopes its server sends bookmarks), and before the first
// bookmark as after: a watch that then hears nothing for 2m30s of
// injected time is ended and resumed from its resourceVersion without a
// relist, counted as silent. After bookmarks it is said once at Warn;
// before the first, it may be all a server without a watch cache does
// (httpwatch.ErrNoBookmarks), so it stays at Debug. A warm start with a
// resync period, whose first watch is read on two goroutines (the first
// reply, then the read-ahead), is watched over alike.
func TestReflectorRestartsSilentWatch(t *testing.T) {
	for _, tc := range []struct {
		name      string
		bookmarks int // sent before the silence
		warm      bool
	}{
		{"before the first bookmark", 0, false},
		{"after bookmarks", 2, false},
		{"warm start with a resync period, before the first bookmark", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := serveOnePod(t)
			clk := clock.NewFake(time.Unix(1000, 0))
			c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1, Clock: clk})
			require.NoError(t, err)
			t.Cleanup(c.CloseIdleConnections)
			logs := &testlog.Log{}
			sink := &recordSink{}
			r := New(c.Resource(watchtest.Pods), sink)
			r.PagedList = true
			r.Clock, r.Logger, r.Random = clk, slog.New(logs), func() float64 { return 0 }
			timers := 1 // the watchdog's, while the watch waits for the server
			if tc.warm {
				done := make(chan struct{})
				close(done)
				r.ResourceVersion = s.ResourceVersion()
				r.Restore = &Restore{Done: done, Loaded: func() bool { return true }, Confirmed: func() {}}
				r.ResyncPeriod = time.Hour
				timers++ // the resync's
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { r.Run(ctx); close(done) }()
			defer func() { cancel(); testwait.Recv(t, done, "Run to return") }()

			require.Eventually(t, func() bool { return r.Stats().Watches == 1 }, testwait.Timeout, time.Millisecond)
			for range tc.bookmarks {
				s.SendBookmarks()
			}
			if !tc.warm {
				// The watch's first event, so it waits again.
				_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"b","namespace":"ns"}}`)
				require.NoError(t, err)
			}
			require.Eventually(t, func() bool { return r.Stats().Events == int64(tc.bookmarks)+map[bool]int64{false: 1}[tc.warm] },
				testwait.Timeout, time.Millisecond)
			rv := r.LastSyncResourceVersion()
			wctx, wcancel := context.WithTimeout(ctx, testwait.Timeout)
			defer wcancel()
			require.NoError(t, clk.WaitForWaiters(wctx, timers), "the watch waits for the server")
			clk.Step(DefaultWatchIdleTimeout - time.Second)
			assert.EqualValues(t, 1, r.Stats().Watches, "not before the bound")
			clk.Step(time.Second)
			require.Eventually(t, func() bool { return r.Stats().Watches == 2 }, testwait.Timeout, time.Millisecond,
				"the silent watch was not stopped at the bound")
			st := r.Stats()
			assert.EqualValues(t, map[bool]int64{false: 1}[tc.warm], st.Lists, "no relist")
			assert.EqualValues(t, 1, st.WatchEnds.Silent)
			assert.Equal(t, rv, r.LastSyncResourceVersion())
			var watches []watchtest.Request
			for _, req := range s.Requests() {
				if req.Verb == "watch" {
					watches = append(watches, req)
				}
			}
			require.Len(t, watches, 2)
			assert.Equal(t, rv, watches[1].Query.Get("resourceVersion"), "resumed from the last version")
			lines := logs.Above()
			if tc.bookmarks == 0 {
				assert.Empty(t, lines)
				assert.Contains(t, logs.All(), "no bookmark from the server within 2m30s of the watch's start")
				return
			}
			require.Len(t, lines, 1)
			assert.True(t, strings.HasPrefix(lines[0], "WARN reflector: watch failed"), lines[0])
			assert.Contains(t, lines[0], "nothing from the server for 2m30s")
		})
	}
}
