package leader

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/clock"
	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/testkit/leasetest"
)

// Zero durations, a zero JitterFactor and nil Jitter, Logger and Clock
// mean the defaults, as they do for an Informer or a Processor.
func TestConfigDefaults(t *testing.T) {
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	e, err := New(Config{
		Leases: c.Resource(leasetest.Resource), Name: "lock", Identity: "a",
		OnStartedLeading: func(context.Context) {},
	})
	require.NoError(t, err)
	assert.Equal(t, DefaultLeaseDuration, e.cfg.LeaseDuration)
	assert.Equal(t, DefaultRenewDeadline, e.cfg.RenewDeadline)
	assert.Equal(t, DefaultRetryPeriod, e.cfg.RetryPeriod)
	assert.Equal(t, DefaultJitterFactor, e.cfg.JitterFactor)
	assert.NotNil(t, e.cfg.Jitter)
	assert.Equal(t, clock.Real, e.cfg.Clock, "a nil Clock means the wall clock")
	assert.Same(t, slog.Default(), e.cfg.Logger, "a nil Logger means slog.Default()")
}
