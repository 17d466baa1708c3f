package listwatch

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/testwait"
	"github.com/listwatch/listwatch/watchtest"
)

// conformance 78: defer factory.Shutdown() with the context given to
// Start still live stops every informer Start started and returns; it
// never waits for ever.
func TestFactoryShutdownStopsWhatStartStarted(t *testing.T) {
	s := watchtest.NewServer()
	defer s.Close()
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	defer client.CloseIdleConnections()
	f := NewFactory(client)
	pods := f.ForResource(podsRes)
	f.Start(context.Background()) // never cancelled
	cms := f.ForResource(cmsRes)
	f.Start(context.Background()) // a second Start, for the new informer
	require.NoError(t, f.Wait(testwait.Context(t)))

	done := make(chan struct{})
	go func() { f.Shutdown(); close(done) }()
	testwait.Recv(t, done, "Shutdown to return with Start's context live")
	assert.True(t, pods.IsStopped() && cms.IsStopped())
}
