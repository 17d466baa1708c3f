package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch"
	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/ratelimit"
	"github.com/listwatch/listwatch/testkit/testwait"
)

// A key another replica owns is tried again later while this replica's
// cache still holds it: the ring may turn back before the relist that
// follows a change drops the key, and no notification would then come.
// Once the cache no longer holds it, the key and what was counted for it
// are forgotten.
func TestNotOwnedKeyIsRetriedWhileCached(t *testing.T) {
	s := configMapServer(t, "a")
	client, err := httpwatch.NewClient(&kubeconfig.Config{Host: s.URL})
	require.NoError(t, err)
	inf := listwatch.NewInformer(client.Resource(httpwatch.Resource{Version: "v1", Resource: "configmaps"}), 0)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); inf.Run(ctx) }()
	defer func() { cancel(); testwait.Recv(t, done, "Run to return after cancel") }()
	require.NoError(t, inf.Wait(ctx))

	q := ratelimit.NewQueue(ratelimit.Config[string]{Clock: clock.NewFake(time.Unix(0, 0))})
	defer q.ShutDown()
	c := &controller{queue: q, rec: newTally(inf.Lister()), out: io.Discard}
	c.rec.set("ns/a", "ns", "Unknown")
	c.rec.set("ns/gone", "ns", "Unknown")

	c.notOwned("ns/a")
	assert.Equal(t, 1, q.NumRequeues("ns/a"), "still cached: tried again after a backoff")
	c.notOwned("ns/gone")
	assert.Zero(t, q.NumRequeues("ns/gone"))
	assert.Equal(t, []string{"ns: Unknown=1"}, c.rec.summary(), "the key no longer cached is no longer counted")
}
