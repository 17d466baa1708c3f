package listwatch

import (
	"context"
	"encoding/pem"
	"log/slog"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/internal/stallproxy"
	"github.com/listwatch/listwatch/internal/testlog"
	"github.com/listwatch/listwatch/internal/testwait"
	"github.com/listwatch/listwatch/kubeconfig"
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
		{"HTTP/2: the ping", "WARN httpwatch: no answer to an HTTP/2 ping within 300ms", true},
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
