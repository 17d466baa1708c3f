package cli_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/examples/internal/cli"
	"github.com/listwatch/listwatch/examples/internal/clitest"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// podInformer returns an informer of the server's pods.
func podInformer(t *testing.T, s *watchtest.Server) *listwatch.Informer {
	t.Helper()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	t.Cleanup(client.CloseIdleConnections)
	return listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "pods"}), 0)
}

// runInformer runs inf until the test ends, and returns its context.
func runInformer(t *testing.T, inf *listwatch.Informer) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	done := make(chan struct{})
	go func() { inf.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") })
	return ctx
}

func TestFirstSyncSucceeds(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	inf := podInformer(t, s)
	stderr := clitest.NewOutput()
	sync := cli.FailFast(inf)
	ctx := runInformer(t, inf)

	require.NoError(t, sync.Wait(ctx, stderr))
	assert.Equal(t, []string{"ns/a"}, inf.Indexer().ListKeys())
}

// A watch-list the server refuses, replaced by a paged list, is routine:
// not a reason to give up.
func TestFirstSyncIgnoresRoutineErrors(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	s.RefuseWatchList(true)
	_, err := s.Create(watchtest.Pods, `{"metadata":{"name":"a","namespace":"ns"}}`)
	require.NoError(t, err)
	inf := podInformer(t, s)
	sync := cli.FailFast(inf)
	ctx := runInformer(t, inf)
	require.NoError(t, sync.Wait(ctx, nil))
}

// Before the first sync the first error ends the wait: a wrong URL, token
// or resource will not fix itself.
func TestFirstSyncFailsFast(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	s.FailNext(watchtest.Failure{Code: 403, Times: 100})
	inf := podInformer(t, s)
	sync := cli.FailFast(inf)
	ctx := runInformer(t, inf)

	err := sync.Wait(ctx, nil)
	assert.True(t, httpwatch.IsForbidden(err), "got %v", err)
}

func TestFirstSyncInterrupted(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	inf := podInformer(t, s)
	sync := cli.FailFast(inf)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := sync.Wait(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorContains(t, err, "interrupted before the first sync")
}
