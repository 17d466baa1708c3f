package leader_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/httpwatch"
	"github.com/listwatch/listwatch/kubeconfig"
	"github.com/listwatch/listwatch/leader"
)

func TestNewValidates(t *testing.T) {
	c, err := httpwatch.NewClient(&kubeconfig.Config{Host: "http://127.0.0.1:1"})
	require.NoError(t, err)
	valid := func() leader.Config {
		return leader.Config{
			Leases: c.Resource(httpwatch.Resource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases", Namespace: "ns"}),
			Name:   "lock", Identity: "a",
			OnStartedLeading: func(context.Context) {},
		}
	}
	for _, tc := range []struct {
		name string
		edit func(*leader.Config)
		want string // "" for valid
	}{
		{"defaults", func(*leader.Config) {}, ""},
		{"no leases", func(c *leader.Config) { c.Leases = nil }, "Leases is nil"},
		{"no name", func(c *leader.Config) { c.Name = "" }, "Name is empty"},
		{"no identity", func(c *leader.Config) { c.Identity = "" }, "Identity is empty"},
		{"no callback", func(c *leader.Config) { c.OnStartedLeading = nil }, "OnStartedLeading is nil"},
		{"negative", func(c *leader.Config) { c.RetryPeriod = -time.Second }, "must be positive"},
		{"lease not above deadline", func(c *leader.Config) { c.LeaseDuration = 10 * time.Second }, "LeaseDuration (10s) must exceed RenewDeadline (10s)"},
		{"deadline not above jittered retry", func(c *leader.Config) { c.RetryPeriod = 9 * time.Second }, "RenewDeadline (10s) must exceed JitterFactor*RetryPeriod (1.2*9s)"},
		{"short and valid", func(c *leader.Config) {
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := valid()
			tc.edit(&cfg)
			el, err := leader.New(cfg)
			if tc.want == "" {
				require.NoError(t, err)
				assert.NotNil(t, el)
				return
			}
			require.ErrorIs(t, err, leader.ErrConfig)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}
