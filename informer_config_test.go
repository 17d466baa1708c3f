package listwatch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// logRecords is a slog.Handler keeping every record's message and level.
type logRecords struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecords) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (h *logRecords) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecords) WithGroup(string) slog.Handler      { return h }

func (h *logRecords) has(msg string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, m := range h.msgs {
		if m == msg {
			return true
		}
	}
	return false
}

func watchtestPods(t *testing.T) (*watchtest.Server, *httpwatch.ResourceClient) {
	t.Helper()
	s := watchtest.NewServer()
	t.Cleanup(s.Close)
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL, QPS: -1})
	require.NoError(t, err)
	t.Cleanup(c.CloseIdleConnections)
	return s, c.Resource(podsRes)
}

func runUntilCleanup(t *testing.T, inf *Informer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") })
	require.NoError(t, inf.Wait(ctx))
}

// conformance 70, decision 17: an informer is configured through fields
// that Run takes once; a field changed afterwards has no effect, where
// client-go's setters return an error.
func TestInformerTakesItsFieldsAtRun(t *testing.T) {
	s, pods := watchtestPods(t)
	inf := NewInformer(pods, 0)
	inf.Reflector.PagedList = true
	inf.Reflector.Backoff = reflector.Backoff{Initial: -1}
	before := make(chan error, 100)
	inf.OnError = func(err error) {
		select {
		case before <- err:
		default: // the test has what it needs
		}
	}
	runUntilCleanup(t, inf)

	var late atomic.Int32
	inf.OnError = func(error) { late.Add(1) } // too late: Run has its copy
	s.FailNext(watchtest.Failure{Code: 403, Verbs: []string{"watch"}})
	s.CloseWatches()
	for forbidden := false; !forbidden; {
		select {
		case err := <-before:
			forbidden = httpwatch.IsForbidden(err)
		case <-time.After(wait):
			t.Fatal("the 403 did not reach the handler set before Run")
		}
	}
	require.NoError(t, s.WaitForWatches(testwait.Context(t), 1))
	assert.Zero(t, late.Load(), "a handler set after Run is not called")
}

// decision 4: a handler panic is never silent: the informer's logger records it, its
// Stats count it, and Processor.OnPanic sees it. The one Logger reaches the
// reflector too.
func TestInformerHandlerPanicIsLoggedAndCounted(t *testing.T) {
	s, pods := watchtestPods(t)
	logs := &logRecords{}
	inf := NewInformer(pods, 0)
	inf.Logger = slog.New(logs)
	inf.Reflector.PagedList = true
	inf.Reflector.Backoff = reflector.Backoff{Initial: -1}
	seen := make(chan any, 1)
	inf.Processor.OnPanic = func(recovered any, _ []byte) { seen <- recovered }
	_, err := inf.AddEventHandler(HandlerFuncs{AddFunc: func(o *Object, _ bool) {
		if o.Name() == "bad" {
			panic("handler bug")
		}
	}})
	require.NoError(t, err)
	runUntilCleanup(t, inf)

	_, err = s.Create(watchtest.Pods, `{"metadata":{"name":"bad","namespace":"ns"}}`)
	require.NoError(t, err)
	select {
	case r := <-seen:
		assert.Equal(t, "handler bug", r)
	case <-time.After(wait):
		t.Fatal("the panic was not reported")
	}
	assert.EqualValues(t, 1, inf.Stats().HandlerPanics)
	assert.True(t, logs.has("ERROR processor: handler panicked"), "logged: %v", logs.msgs)

	s.FailNext(watchtest.Failure{Code: 500, Verbs: []string{"watch"}})
	s.CloseWatches()
	require.Eventually(t, func() bool { return logs.has("WARN reflector: watch start failed") }, wait, time.Millisecond,
		"the reflector logs to the informer's logger")
}

// A negative resync period is an error, not silently no resync.
func TestInformerNegativeResyncIsAnError(t *testing.T) {
	_, pods := watchtestPods(t)
	inf := NewInformer(pods, -time.Second)
	_, err := inf.AddEventHandler(HandlerFuncs{})
	assert.ErrorContains(t, err, "negative resync period")
	_, err = NewInformer(pods, 0).AddEventHandlerWithResync(HandlerFuncs{}, -time.Minute)
	assert.ErrorContains(t, err, "negative resync period")
}

// ForResource honours the namespace of its Resource; the factory's
// Namespace is the default for those that name none.
func TestFactoryHonoursResourceNamespace(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	for _, p := range []string{
		`{"metadata":{"name":"a","namespace":"shop"}}`,
		`{"metadata":{"name":"b","namespace":"other"}}`,
	} {
		_, err := s.Create(watchtest.Pods, p)
		require.NoError(t, err)
	}
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	logs := &logRecords{}
	client.Logger = slog.New(logs) // set once, on the client
	f := NewFactory(client)
	f.Namespace = "shop"
	shop := f.ForResource(podsRes)
	otherRes := podsRes
	otherRes.Namespace = "other"
	other := f.ForResource(otherRes)
	require.NotSame(t, shop, other)
	assert.Same(t, client.Logger, other.Logger, "the client's logger reaches the informers")

	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); f.Shutdown() }()
	f.Start(ctx)
	require.NoError(t, f.Wait(ctx))
	assert.Equal(t, []string{"shop/a"}, shop.Indexer().ListKeys())
	assert.Equal(t, []string{"other/b"}, other.Indexer().ListKeys())
}
