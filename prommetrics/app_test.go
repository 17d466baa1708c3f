package prommetrics

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/app"
	"github.com/listwatch/listwatch/watchtest"
)

// Handler, the app's metrics hook, serves the app's runner, caches and
// client under the peers' names, and the Go runtime's.
func TestHandlerServesTheAppsMetrics(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	_, err := s.Create(watchtest.ConfigMaps, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)

	a := app.New("counter")
	a.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(context.Background())
	reconciled := make(chan struct{}, 1)
	handler := make(chan http.Handler, 1)
	done := make(chan error, 1)
	go func() {
		done <- a.Run(ctx, []string{"--server", s.URL, "--health-addr", ""}, func(a *app.App) error {
			cms := a.Watch(app.ConfigMaps)
			a.Reconcile(cms, func(context.Context, *app.Request) error {
				select {
				case reconciled <- struct{}{}:
				default:
				}
				return nil
			})
			h, err := Handler(a)
			handler <- h
			return err
		})
	}()
	var h http.Handler
	select {
	case h = <-handler:
	case err := <-done:
		t.Fatalf("Run returned before setup: %v", err)
	}
	select {
	case <-reconciled:
	case <-time.After(10 * time.Second):
		t.Fatal("no reconcile")
	}
	var body string
	require.Eventually(t, func() bool {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		body = rec.Body.String()
		return strings.Contains(body, `controller_runtime_reconcile_total{controller="counter",result="success"} 1`)
	}, 10*time.Second, 5*time.Millisecond)
	for _, want := range []string{
		`listwatch_informer_synced{informer="configmaps.v1",namespace="",resource="configmaps.v1"} 1`,
		`workqueue_adds_total{controller="counter",name="counter"}`,
		`rest_client_requests_total{`,
		`go_goroutines `,
		`process_start_time_seconds `,
	} {
		assert.Contains(t, body, want)
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return")
	}
}
