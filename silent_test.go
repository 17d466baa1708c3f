package listwatch

import (
	"context"
	"encoding/pem"
	"log/slog"
	"testing"
	"time"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/stallproxy"
	"github.com/listwatch/listwatch/testkit/testlog"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/require"
)

// An informer whose connection goes silent — the proxy between it and the
// server stops forwarding and leaves the sockets open — hears the next
// change within seconds, without a relist, and the log says so once at
// Warn (decision 36). Over HTTP/1.1 the reflector's WatchIdleTimeout finds
// the silence, once the server has shown that it sends bookmarks; over
// HTTP/2 the transport's ping does, with the idle bound off. On the main
// before decision 36 both wait for ever.
func TestInformerResumesWatchOnSilentConnection(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		http2      bool
	}{
		{"HTTP/1.1: the watch idle bound", "WARN reflector: watch failed", false},
		{"HTTP/2: the ping", "WARN reflector: watch failed", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := watchtest.NewUnstartedServer()
			s.BookmarkInterval = 0 // bookmarks only when the test sends them
			cfg := &kubeconfig.Config{QPS: -1}
			if tc.http2 {
				s.EnableHTTP2 = true
				s.StartTLS()
				cfg.CAData = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
				cfg.PingAfter, cfg.PingTimeout = 100*time.Millisecond, 300*time.Millisecond
			} else {
				s.Start()
			}
			t.Cleanup(s.Close)
			p := stallproxy.New(t, s.Listener.Addr().String())
			cfg.Host = map[bool]string{false: "http://", true: "https://"}[tc.http2] + p.Addr()
			client, err := httpwatch.NewClient(cfg)
			require.NoError(t, err)
			t.Cleanup(client.CloseIdleConnections)
			logger, log := testlog.NewLogger()
			client.Logger = logger

			inf := NewInformer(client.Resource(watchtest.Pods), 0)
			inf.Logger = logger
			inf.Reflector.WatchIdleTimeout = time.Second
			if tc.http2 {
				inf.Reflector.WatchIdleTimeout = -1 // the ping alone
			}
			rec := newRecorder()
			_, err = inf.AddEventHandler(rec)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { inf.Run(ctx); close(done) }()
			t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") })
			require.NoError(t, inf.Wait(ctx))

			heard := func(name, rv string) {
				t.Helper()
				require.Eventually(t, func() bool { v, _ := rec.snapshot(); return v["ns/"+name] == rv },
					testwait.Timeout, time.Millisecond, "the handler never heard %s at %s", name, rv)
			}
			_, err = s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
			require.NoError(t, err)
			// Bookmarks show that the server sends them; once b is heard,
			// so were they.
			s.SendBookmarks()
			s.SendBookmarks()
			b, err := s.Create(watchtest.Pods, `{"metadata":{"name":"b","namespace":"ns"}}`)
			require.NoError(t, err)
			heard("b", b.ResourceVersion())

			p.Stall()
			a, err := s.Update(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns","labels":{"after":"stall"}}}`)
			require.NoError(t, err)
			heard("a", a.ResourceVersion())

			require.EqualValues(t, 1, inf.Stats().Lists, "the watch resumed without a relist")
			warned := log.Lines(slog.LevelWarn)
			require.Len(t, warned, 1, "the silent connection is said once: %q", log.Above())
			require.Contains(t, warned[0].String(), tc.want)
		})
	}
}

// decision 36: over HTTP/1.1 a new informer's first watch, whose
// connection goes silent before the server has sent a single bookmark,
// is found within 3 minutes of injected time, and resumed without a
// relist: its client hopes from its first watch that the server sends
// bookmarks, so the bound holds from the watch's start. (Before, it
// waited for the watch's own timeout plus 30 s: 5.5 to 10.5 minutes.)
// After the first bookmark the same stall is said at Warn
// (TestInformerResumesWatchOnSilentConnection).
func TestInformerFindsWatchStalledBeforeItsFirstBookmark(t *testing.T) {
	s := watchtest.NewUnstartedServer()
	s.BookmarkInterval = 0 // the server sends no bookmark at all
	s.Start()
	t.Cleanup(s.Close)
	p := stallproxy.New(t, s.Listener.Addr().String())
	clk := clock.NewFake(time.Unix(1000, 0))
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: "http://" + p.Addr(), QPS: -1, Clock: clk})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	logger, log := testlog.NewLogger()
	client.Logger = logger

	inf := NewInformer(client.Resource(watchtest.Pods), 0)
	inf.Logger, inf.Clock = logger, clk
	rec := newRecorder()
	_, err = inf.AddEventHandler(rec)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") })
	require.NoError(t, inf.Wait(ctx))
	require.Eventually(t, func() bool { return inf.Stats().Watches == 1 }, testwait.Timeout, time.Millisecond)

	p.Stall()
	a, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	wctx, wcancel := context.WithTimeout(ctx, testwait.Timeout)
	defer wcancel()
	require.NoError(t, clk.WaitForWaiters(wctx, 1), "the watch waits for the server")
	clk.Step(3 * time.Minute)
	require.Eventually(t, func() bool { v, _ := rec.snapshot(); return v["ns/a"] == a.ResourceVersion() },
		testwait.Timeout, time.Millisecond, "the change made during the stall is heard")

	st := inf.Stats()
	require.EqualValues(t, 1, st.Lists, "the watch resumed without a relist")
	require.EqualValues(t, 1, st.WatchEnds.Silent)
	// Before the first bookmark a silence may be all a server without a
	// watch cache does: said at Debug (httpwatch.ErrNoBookmarks).
	require.Empty(t, log.Above())
	require.Contains(t, log.All(), "no bookmark from the server within 2m30s of the watch's start")
}
