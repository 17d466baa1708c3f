package httpwatch_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
)

// The client's requests carry credentials to the configured server only: a
// redirect elsewhere arrives without them (the round
// tripper is tested in package kubeconfig).
func TestClientCredentialsStayWithTheServer(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"metadata":{"name":"x"}}`))
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusFound)
	}))
	defer srv.Close()

	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: srv.URL, BearerToken: "hunter2"})
	require.NoError(t, err)
	defer c.CloseIdleConnections()
	_, err = c.Resource(httpwatch.Resource{Version: "v1", Resource: "pods", Namespace: "ns"}).Get(context.Background(), "x")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{""}, seen)
}
