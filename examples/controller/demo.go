package main

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demo"
)

// demoServer starts the embedded demo server: a dozen configmaps labelled app,
// one of them changed every 300 ms, and leases, events and secrets.
func demoServer(ctx context.Context) (string, func(), error) {
	return (&demo.OnDemand{Setup: demo.ConfigMapWorld(ctx, 12, 300*time.Millisecond)}).Start(ctx)
}
